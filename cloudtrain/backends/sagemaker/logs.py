"""Follow a training job's CloudWatch logs: every line once, in order per instance, and stop.

SageMaker writes one stream per instance (and per container start) into
``/aws/sagemaker/TrainingJobs``, named ``<job>/algo-<n>-<epoch seconds>``. Each round:

1. *discover* streams: ``DescribeLogStreams`` with the ``<job>/`` prefix, following
   ``nextToken`` to the end (50 streams a page). Every round until there is a stream
   per instance, then every ``rediscover_seconds`` (a restarted container opens a new
   stream). A new stream is read in the round it is found: nothing waits for the others.
2. *read* each stream with ``GetLogEvents(startFromHead=True)`` from its own
   ``nextForwardToken``. The service returns the token it was given when there is
   nothing new, and may return an empty page with a new token when there is more, so
   a stream is read on while its page is full or empty-with-a-new-token, and
   otherwise picked up from its token next round. A stream that keeps returning
   nothing is read every 2nd, then 4th round (at most ``idle_rounds_max``).
3. *merge* the round's events by timestamp (stable, so each stream keeps its order)
   and yield them as :class:`LogLine` with the replica name ``algo-<n>``.

Rounds start at least ``poll_seconds`` apart, and further apart when a round needed
more calls than ``max_calls_per_second`` allows (CloudWatch Logs allows 25 per second
per account and region, shared with everything else). ``ThrottlingException`` backs
off exponentially and retries the same call. Every ``status_seconds`` the job's state
is asked for; once it is terminal, after ``final_grace_seconds``, a final read drains
every stream and the iterator ends.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from cloudtrain.backends.base import LogLine
from cloudtrain.backends.follow import Notify, Outage, default_notify
from cloudtrain.errors import CloudUnreachable
from .aws import THROTTLING, error_code, translated

LOG_GROUP = "/aws/sagemaker/TrainingJobs"
PAGE_EVENTS = 10_000  # GetLogEvents returns at most 10,000 events or 1 MB a page
PAGE_BYTES = 1_000_000
_EVENT_OVERHEAD = 26  # bytes CloudWatch counts per event on top of the message
_REPLICA = re.compile(r"^(?P<replica>.+)-\d+$")


def replica_name(stream: str) -> str:
    """``job/algo-1-1700000000`` → ``algo-1``; anything else: the part after the job name."""
    tail = stream.split("/", 1)[-1]
    m = _REPLICA.match(tail)
    return m["replica"] if m else tail


@dataclass
class _Stream:
    name: str
    replica: str
    token: str | None = None
    idle: int = 0  # consecutive reads that found nothing
    wait: int = 0  # rounds to skip before the next read


class LogTailer:
    def __init__(
        self,
        client: Any,
        job_name: str,
        *,
        job_done: Callable[[], bool],
        instance_count: int = 1,
        poll_seconds: float = 2.0,
        status_seconds: float = 5.0,
        rediscover_seconds: float = 30.0,
        final_grace_seconds: float = 2.0,
        max_calls_per_second: float = 10.0,
        idle_rounds_max: int = 4,
        max_throttle_retries: int = 12,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        notify: Notify = default_notify,
        give_up_after: float = 24 * 3600.0,
    ):
        self.client = client
        self.prefix = f"{job_name}/"
        self.job_done = job_done
        self.instance_count = instance_count
        self.poll_seconds = poll_seconds
        self.status_seconds = status_seconds
        self.rediscover_seconds = rediscover_seconds
        self.final_grace_seconds = final_grace_seconds
        self.max_calls_per_second = max_calls_per_second
        self.idle_rounds_max = idle_rounds_max
        self.max_throttle_retries = max_throttle_retries
        self.sleep = sleep
        self.clock = clock
        self.streams: dict[str, _Stream] = {}
        self.calls: Counter[str] = Counter()  # API calls made, by operation
        self.throttled = 0  # calls answered with a throttling error (and retried)
        self._discovered_at: float | None = None
        self.outage = Outage("CloudWatch Logs", clock=clock, notify=notify, give_up_after=give_up_after,
                             reattach=f"cloudtrain logs {job_name} --follow")  # fmt: skip

    def read(self) -> Iterator[LogLine]:
        """Everything there is now, from the start (``cloudtrain logs JOB``)."""
        with translated("reading CloudWatch logs"):
            yield from self._round(drain=True)

    def follow(self) -> Iterator[LogLine]:
        """Lines as they arrive; ends after a final read once the job is terminal."""
        with translated("reading CloudWatch logs"):
            done = self._job_done()
            if done:  # already over: one read of everything
                yield from self._round(drain=True)
                return
            checked = self.clock()
            while True:
                start = self.clock()
                calls = sum(self.calls.values())
                yield from self._round(drain=False)
                if self.clock() - checked >= self.status_seconds:
                    checked = self.clock()
                    if self._job_done():
                        self.sleep(self.final_grace_seconds)
                        yield from self._round(drain=True)
                        return
                made = sum(self.calls.values()) - calls
                pause = max(self.poll_seconds, made / self.max_calls_per_second) - (self.clock() - start)
                if pause > 0:
                    self.sleep(pause)

    # -- one round ---------------------------------------------------------------------

    def _round(self, drain: bool) -> Iterator[LogLine]:
        if drain or self._discovery_due():
            self._discover()
        batch: list[tuple[int, int, LogLine]] = []
        for stream in list(self.streams.values()):
            if not drain and stream.wait > 0:
                stream.wait -= 1
                continue
            events = self._read(stream, drain)
            if events:
                stream.idle = stream.wait = 0
            else:
                stream.idle += 1
                stream.wait = min(2 ** (stream.idle - 1) - 1, self.idle_rounds_max - 1) if stream.idle > 1 else 0
            for event in events:
                line = LogLine(
                    timestamp=dt.datetime.fromtimestamp(event["timestamp"] / 1000, dt.timezone.utc),
                    replica=stream.replica,
                    message=event["message"].rstrip("\n"),
                )
                batch.append((event["timestamp"], len(batch), line))
        batch.sort(key=lambda item: item[:2])
        for _, _, line in batch:
            yield line

    def _discovery_due(self) -> bool:
        if self._discovered_at is None or len(self.streams) < self.instance_count:
            return True
        return self.clock() - self._discovered_at >= self.rediscover_seconds

    def _discover(self) -> None:
        self._discovered_at = self.clock()
        token = None
        while True:
            kwargs: dict[str, Any] = {"logGroupName": LOG_GROUP, "logStreamNamePrefix": self.prefix}
            if token:
                kwargs["nextToken"] = token
            try:
                page = self._call("describe_log_streams", **kwargs)
            except Exception as exc:
                if error_code(exc) == "ResourceNotFoundException":  # no group before the first job logs
                    return
                raise
            for entry in page.get("logStreams", []):
                name = entry["logStreamName"]
                if name not in self.streams:
                    self.streams[name] = _Stream(name, replica_name(name))
            new = page.get("nextToken")
            if not new or new == token or not page.get("logStreams"):
                return
            token = new

    def _read(self, stream: _Stream, drain: bool) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        for _ in range(1000 if drain else 20):
            kwargs: dict[str, Any] = {"logGroupName": LOG_GROUP, "logStreamName": stream.name, "startFromHead": True}
            if stream.token:
                kwargs["nextToken"] = stream.token
            page = self._call("get_log_events", **kwargs)
            sent, stream.token = stream.token, page.get("nextForwardToken") or stream.token
            got = page.get("events", [])
            events.extend(got)
            if stream.token == sent:  # the end: the service hands back the token it was given
                break
            full = len(got) >= PAGE_EVENTS or sum(len(e["message"]) + _EVENT_OVERHEAD for e in got) >= PAGE_BYTES * 0.9
            if got and not full and not drain:
                break  # more may come; the token picks it up next round
        return events

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        """One call, retried on throttling (doubling, 1 s to 30 s) and on 5xx / dropped or refused
        connections (``follow.Outage``: capped backoff with jitter, one line lost, one back). The
        retry sends the same token, so nothing is lost or repeated."""
        delay, attempt = 1.0, 0
        while True:
            self.calls[operation] += 1
            try:
                page = getattr(self.client, operation)(**kwargs)
            except Exception as exc:
                if _transient(exc):
                    self.sleep(self.outage.failed(exc))
                    continue
                if error_code(exc) not in THROTTLING or attempt >= self.max_throttle_retries:
                    raise
            else:
                self.outage.ok()
                return page
            attempt += 1
            self.throttled += 1
            self.sleep(delay)
            delay = min(delay * 2, 30.0)

    def _job_done(self) -> bool:
        """The job's state; while SageMaker cannot be reached it may still run."""
        try:
            return self.job_done()
        except CloudUnreachable:
            return False


def _transient(exc: BaseException) -> bool:
    import botocore.exceptions as bx

    if isinstance(exc, (bx.EndpointConnectionError, bx.ConnectionClosedError, bx.ReadTimeoutError,
                        bx.ConnectTimeoutError)):  # fmt: skip
        return True
    response = getattr(exc, "response", None)
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) if isinstance(response, dict) else 0
    return status >= 500 or error_code(exc) in ("ServiceUnavailableException", "InternalFailure")
