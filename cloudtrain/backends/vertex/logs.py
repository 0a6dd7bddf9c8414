"""Follow a Vertex AI job's output in Cloud Logging: no line lost, none twice, little lag.

How it reads. Each read lists ``resource.type="ml_job" AND resource.labels.job_id="ID" AND
timestamp>="FLOOR"`` ordered by ``timestamp asc``, following page tokens. The position is
the newest (timestamp, insertId) seen; the floor lies ``lookback`` seconds behind it, so an
entry that becomes readable late (Cloud Logging is eventually consistent; ``gcloud``'s
legacy streamer drops anything more than ~5 s late) is still picked up, and insertIds
already shown are skipped. The remembered insertIds are exactly those at or above the
floor, so memory stays bounded by the entries inside one look-back window.

Order. Each page arrives sorted by timestamp and is shown in that order; a replica's
logging agent delivers its entries in order, so lines are in order per replica. A
straggler older than a line already shown for its replica is shown when seen, never dropped.

Pace and quota. About one read per second while lines flow, doubling to ``idle_cap``
(10 s) while the job is quiet, and back to 1 s as soon as a line appears or the job starts
running. Cloud Logging's default quota is 60 ``entries.list`` requests per minute per
project; a token bucket keeps one follower at 50 per minute sustained with bursts of 5 for
paging, so never more than 55 in any minute (``CLOUDTRAIN_LOG_READS_PER_MINUTE`` sets the
sustained figure). A 429 / RESOURCE_EXHAUSTED doubles the shortest interval (4 s at least,
60 s at most) and it recovers gradually; the read resumes from the position, so nothing is
lost. UNAVAILABLE / DEADLINE_EXCEEDED are retried with backoff. Once the job is terminal,
it reads on until the logs go quiet (bounded; see ``TailPolicy.final_*``) and the iterator ends.
"""

from __future__ import annotations

import datetime as dt
import heapq
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol

from cloudtrain.backends.base import JobState, JobStatus, LogLine
from cloudtrain.errors import BackendError, CloudSetupError, CloudUnreachable

TASK_LABEL = "ml.googleapis.com/task_name"
_SEVERITY = {  # google.logging.type.LogSeverity; DEFAULT (0) reads as INFO
    0: "INFO", 100: "DEBUG", 200: "INFO", 300: "NOTICE", 400: "WARNING",
    500: "ERROR", 600: "CRITICAL", 700: "ALERT", 800: "EMERGENCY",
}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class Entry:
    """What the tailer needs of a Cloud Logging ``LogEntry``."""

    timestamp: dt.datetime
    insert_id: str
    replica: str
    severity: str
    message: str


class PageReader(Protocol):
    def __call__(self, filter: str, page_token: str | None, page_size: int) -> tuple[list[Entry], str | None]:
        """One ``entries.list`` request: a page of entries and the next page token (or None)."""
        ...


@dataclass
class TailPolicy:
    min_interval: float = 1.0  # seconds between reads while lines flow
    idle_factor: float = 2.0  # each empty read multiplies the interval by this …
    idle_cap: float = 10.0  # … up to this
    reads_per_minute: int = 50  # sustained list requests per minute (default quota: 60 per project)
    burst: int = 5  # extra back-to-back reads allowed, for paging
    throttled_floor: float = 4.0  # the shortest interval right after a 429
    throttled_cap: float = 60.0
    lookback: float = 60.0  # seconds behind the newest entry that each read goes back, for late entries
    status_every: float = 5.0  # check the job's state at most this often
    final_settle: float = 5.0  # the first read after the end happens this long after the job's end time
    final_quiet: float = 20.0  # … then reads go on until this long passed since the end and the last new line …
    final_drain: float = 45.0  # … or until this long after the end
    page_size: int = 1000
    max_remembered: int = 200_000  # insertIds kept at most (normally far fewer: one look-back window)
    max_failures: int = 20  # consecutive failed reads before giving up


class ReadBudget:
    """Token bucket: ``per_minute`` sustained, ``burst`` back to back."""

    def __init__(self, per_minute: int, burst: int, clock: Callable[[], float], sleep: Callable[[float], None]):
        self.rate = per_minute / 60.0
        self.burst = float(max(burst, 1))
        self.tokens = self.burst
        self.clock, self.sleep = clock, sleep
        self.stamp = clock()

    def acquire(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            self.sleep((1 - self.tokens) / self.rate)
            self.tokens, self.stamp = 1.0, self.clock()
        self.tokens -= 1


def log_filter(job_id: str, floor: dt.datetime) -> str:
    stamp = floor.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return f'resource.type="ml_job" AND resource.labels.job_id="{job_id}" AND timestamp>="{stamp}"'


class LogTailer:
    """Lines of one job from Cloud Logging. ``read_page`` and ``job_status`` are injected."""

    def __init__(
        self,
        read_page: PageReader,
        job_id: str,
        *,
        start: dt.datetime,
        job_status: Callable[[], JobStatus],
        policy: TailPolicy | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.read_page, self.job_id, self.job_status = read_page, job_id, job_status
        self.policy = policy or TailPolicy()
        self.clock, self.sleep = clock, sleep
        self.start = start
        self.budget = ReadBudget(self.policy.reads_per_minute, self.policy.burst, clock, sleep)
        self.newest: dt.datetime | None = None
        self.seen: set[str] = set()
        self._by_time: list[tuple[dt.datetime, str]] = []  # heap, to forget ids below the floor
        self.requests = 0  # list requests made (for the bench and the tests)
        self.throttled = 0  # 429s received
        self.shown = 0
        self._floor_interval = self.policy.min_interval

    # -- one read -----------------------------------------------------------------------

    def floor(self) -> dt.datetime:
        if self.newest is None:
            return self.start
        return max(self.start, self.newest - dt.timedelta(seconds=self.policy.lookback))

    def read(self) -> Iterator[LogLine]:
        """Everything readable now from the position on, across pages; raises on errors."""
        query = log_filter(self.job_id, self.floor())
        token: str | None = None
        while True:
            self.budget.acquire()
            self.requests += 1
            entries, token = self.read_page(query, token, self.policy.page_size)
            for entry in sorted(entries, key=lambda e: e.timestamp):
                if entry.insert_id in self.seen:
                    continue
                self._remember(entry)
                self.shown += 1
                yield LogLine(entry.timestamp, entry.replica, entry.message, entry.severity)
            if not token:
                break
        self._forget_below(self.floor())

    def _remember(self, entry: Entry) -> None:
        self.seen.add(entry.insert_id)
        heapq.heappush(self._by_time, (entry.timestamp, entry.insert_id))
        if self.newest is None or entry.timestamp > self.newest:
            self.newest = entry.timestamp
        while len(self._by_time) > self.policy.max_remembered:
            self.seen.discard(heapq.heappop(self._by_time)[1])

    def _forget_below(self, floor: dt.datetime) -> None:
        while self._by_time and self._by_time[0][0] < floor:
            self.seen.discard(heapq.heappop(self._by_time)[1])

    # -- reading with retries -----------------------------------------------------------

    def read_all(self) -> Iterator[LogLine]:
        """One complete read (retried until it succeeds), then stop: ``logs`` without ``--follow``."""
        from google.api_core import exceptions

        retryable = (exceptions.ResourceExhausted, exceptions.ServiceUnavailable, exceptions.DeadlineExceeded)
        failures, delay = 0, self.policy.throttled_floor
        while True:
            try:
                yield from self.read()
                return
            except retryable as exc:
                failures += 1
                self._give_up_after(failures, exc)
                self.throttled += isinstance(exc, exceptions.ResourceExhausted)
                self.sleep(delay)
                delay = min(delay * 2, self.policy.throttled_cap)
            except exceptions.GoogleAPICallError as exc:
                raise _read_error(exc) from exc

    def follow(self) -> Iterator[LogLine]:
        """Lines as they arrive; after the job ends, one final read, then the iterator ends."""
        from google.api_core import exceptions

        p = self.policy
        interval, failures = p.min_interval, 0
        state: JobState | None = None
        next_status = self.clock()
        while True:
            began = self.clock()
            if began >= next_status:
                status = self.job_status()
                next_status = began + p.status_every
                if status.state.terminal:
                    yield from self._drain(status)
                    return
                if status.state is JobState.RUNNING and state is not JobState.RUNNING:
                    interval = self._floor_interval  # lines are about to flow
                state = status.state
            before = self.shown
            try:
                yield from self.read()
            except exceptions.ResourceExhausted:
                self.throttled += 1
                self._floor_interval = min(max(self._floor_interval * 2, p.throttled_floor), p.throttled_cap)
                interval = max(interval, self._floor_interval)
            except (exceptions.ServiceUnavailable, exceptions.DeadlineExceeded) as exc:
                failures += 1
                self._give_up_after(failures, exc)
                interval = min(max(interval * 2, 2 * p.min_interval), p.idle_cap)
            except exceptions.GoogleAPICallError as exc:
                raise _read_error(exc) from exc
            else:
                failures = 0
                self._floor_interval = max(p.min_interval, self._floor_interval * 0.8)
                if self.shown > before:
                    interval = self._floor_interval
                else:
                    interval = min(interval * p.idle_factor, max(p.idle_cap, self._floor_interval))
            wait = began + interval - self.clock()
            if wait > 0:
                self.sleep(wait)

    def _drain(self, status: JobStatus) -> Iterator[LogLine]:
        """After the end: read until the logs go quiet, so lines the agent ships at shutdown still show.

        Entries written just before the end can become readable well after it (11–17 s
        after the end at 60 replicas in bench/_vertex_scale.py), so one read would lose
        them; reading every 2 s until ``final_quiet`` has passed since both the end and the
        last new line, bounded by ``final_drain`` after the end, costs about ten reads.
        """
        p = self.policy
        ended = (status.ended - _EPOCH).total_seconds() if status.ended else self.clock()
        self._sleep_until(ended + p.final_settle)
        last_new = ended
        while True:
            before = self.shown
            yield from self.read_all()
            now = self.clock()
            if self.shown > before:
                last_new = now
            if now - last_new >= p.final_quiet or now >= ended + p.final_drain:
                return
            self._sleep_until(now + 2 * p.min_interval)

    def _sleep_until(self, when: float) -> None:
        wait = when - self.clock()
        if wait > 0:
            self.sleep(wait)

    def _give_up_after(self, failures: int, exc: BaseException) -> None:
        if failures >= self.policy.max_failures:
            raise CloudUnreachable(f"Cloud Logging kept failing ({failures} reads in a row): {_short(exc)}") from exc


def _read_error(exc: Any) -> BackendError:
    if getattr(exc, "code", None) in (401, 403):
        hint = "reading logs needs roles/logging.viewer on the project"
        return CloudSetupError(f"Cloud Logging refused the read: {_short(exc)}", hint)
    return BackendError(f"Cloud Logging refused the read: {_short(exc)}")


def _short(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


# -- the Cloud Logging client side --------------------------------------------------------


def to_entry(pb: Any) -> Entry:
    """A ``google.logging.v2.LogEntry`` (raw protobuf) → :class:`Entry`."""
    replica = pb.labels.get(TASK_LABEL) or pb.resource.labels.get("task_name") or pb.log_name.rsplit("/", 1)[-1]
    payload = pb.WhichOneof("payload")
    if payload == "text_payload":
        message = pb.text_payload
    elif payload == "json_payload":
        fields = pb.json_payload.fields
        message = fields["message"].string_value if "message" in fields else _struct_text(pb.json_payload)
    else:
        message = ""
    stamp = pb.timestamp.ToDatetime(tzinfo=dt.timezone.utc)
    return Entry(stamp, pb.insert_id, replica, _SEVERITY.get(pb.severity, str(pb.severity)), message.rstrip("\n"))


def _struct_text(struct: Any) -> str:
    from google.protobuf import json_format

    return json_format.MessageToJson(struct, indent=None)


class CloudLoggingReader:
    """:class:`PageReader` over ``logging_v2``'s ``LoggingServiceV2Client``."""

    def __init__(self, client: Any, project: str, *, timeout: float = 30.0):
        self.client, self.resource, self.timeout = client, f"projects/{project}", timeout

    @classmethod
    def connect(cls, project: str, endpoint: Any, creds: Any) -> "CloudLoggingReader":
        from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
        from google.cloud.logging_v2.services.logging_service_v2.transports import LoggingServiceV2GrpcTransport

        from cloudtrain.backends.vertex.settings import grpc_transport

        transport = grpc_transport(LoggingServiceV2GrpcTransport, endpoint, creds)
        return cls(LoggingServiceV2Client(transport=transport), project)

    def __call__(self, filter: str, page_token: str | None, page_size: int) -> tuple[list[Entry], str | None]:
        request = {
            "resource_names": [self.resource],
            "filter": filter,
            "order_by": "timestamp asc",
            "page_size": page_size,
            "page_token": page_token or "",
        }
        pager = self.client.list_log_entries(request=request, retry=None, timeout=self.timeout)
        page = next(iter(pager.pages))  # the first page only: exactly one request
        response = type(page).pb(page)
        return [to_entry(e) for e in response.entries], response.next_page_token or None
