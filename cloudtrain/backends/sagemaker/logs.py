"""Follow a training job's CloudWatch logs: every line once, in order per instance, and stop.

SageMaker writes one stream per instance (and per container start) into ``/aws/sagemaker/TrainingJobs``, named
``<job>/algo-<n>-<epoch seconds>``. The live view is Live Tail (:mod:`.live_tail`) on a background thread, whose
calls a minute do not depend on the instance count: one session, one ``GetLogEvents`` every ``verify_seconds`` for
one stream in turn (the ground truth walking behind it, so even an unannounced drop is shown and memory stays small).

The ground truth is the polling round, ``GetLogEvents`` by stream and token, skipping what the tail showed
(:class:`~.live_tail.Merge`). It runs whenever the tail may lack something: before and after each session (what was
ingested between two is in neither), on a ``sampled`` or ``stall_seconds``-late update (the tail's updates are held
meanwhile, so each instance's lines stay in order), and while the tail is down; where the endpoint has no Live Tail
the follower says so once and polls, with the same guarantee. A round discovers streams (``DescribeLogStreams``
by prefix, every round until there is one per instance, then every ``rediscover_seconds``: a restarted container
opens a new one), reads each from its own ``nextForwardToken`` while its page is full or empty-with-a-new-token
(the service's way of saying there is more), reads idle streams less often (up to ``idle_rounds_max``), and
yields the events merged by timestamp (stable per stream); a line older than one shown for its instance is
``late``. Rounds are ``poll_seconds`` apart or more, within ``max_calls_per_second`` (CloudWatch Logs allows 25 a
second per account and region, shared); throttling backs off and retries the same call. Once the job is terminal,
after ``final_grace_seconds``, a final read drains every stream and the iterator ends."""

from __future__ import annotations

import datetime as dt
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from cloudtrain.backends.base import LogLine
from cloudtrain.backends.follow import LateMarker, Notify, Outage, default_notify, event_waiter
from cloudtrain.errors import CloudUnreachable

from .aws import THROTTLING, error_code, translated
from .live_tail import LiveTail, Merge, TailUpdate

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
        open_tail: Callable[[], Any] | None = None,
        poll_seconds: float = 2.0,
        status_seconds: float = 5.0,
        rediscover_seconds: float = 30.0,
        final_grace_seconds: float = 2.0,
        max_calls_per_second: float = 10.0,
        idle_rounds_max: int = 4,
        max_throttle_retries: int = 12,
        verify_seconds: float = 10.0,
        stall_seconds: float = 8.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[threading.Event, float], bool] | None = None,
        notify: Notify = default_notify,
        give_up_after: float = 24 * 3600.0,
    ):
        self.client = client
        self.job_name = job_name
        self.prefix = f"{job_name}/"
        self.job_done = job_done
        self.instance_count = instance_count
        self.open_tail = open_tail
        self.poll_seconds = poll_seconds
        self.status_seconds = status_seconds
        self.rediscover_seconds = rediscover_seconds
        self.final_grace_seconds = final_grace_seconds
        self.max_calls_per_second = max_calls_per_second
        self.idle_rounds_max = idle_rounds_max
        self.max_throttle_retries = max_throttle_retries
        self.verify_seconds = verify_seconds
        self.stall_seconds = stall_seconds
        self.sleep = sleep
        self.clock = clock
        # The tail thread waits in real time unless told otherwise; the follower waits on its
        # clock (an injected ``sleep`` is a virtual clock that only moves when slept on).
        self.tail_wait = wait or event_waiter(None)
        self.wait = wait or event_waiter(None if sleep is time.sleep else sleep)
        self.notify = notify
        self.streams: dict[str, _Stream] = {}
        self.calls: Counter[str] = Counter()  # API calls made, by operation
        self.phase_calls: Counter[str] = Counter()  # … by why: poll, reconcile, verify, final
        self.throttled = 0  # calls answered with a throttling error (and retried)
        self.merge = Merge()
        self.marker = LateMarker()
        self.tail: LiveTail | None = None
        self.reconciles = 0  # ground-truth reads of every stream while the tail ran
        self.verifies = 0  # single-stream ground-truth reads behind the tail
        self.from_tail = 0  # lines first shown by the live tail
        self.shown = 0
        self._phase = "poll"
        self._verify_next = 0
        self._discovered_at: float | None = None
        self.outage = Outage(
            "CloudWatch Logs",
            clock=clock,
            notify=notify,
            give_up_after=give_up_after,
            reattach=f"cloudtrain logs {job_name} --follow",
        )

    def read(self) -> Iterator[LogLine]:
        """Everything there is now, from the start (``cloudtrain logs JOB``)."""
        with translated("reading CloudWatch logs"):
            yield from self._round(drain=True)

    def follow(self) -> Iterator[LogLine]:
        """Lines as they arrive; ends after a final read once the job is terminal."""
        with translated("reading CloudWatch logs"):
            if self._job_done():  # already over: one read of everything
                yield from self._round(drain=True)
                return
            if self.open_tail is None:
                yield from self._poll(self.clock())
                return
            wake = threading.Event()
            self.tail = LiveTail(
                self.open_tail, clock=self.clock, wait=self.tail_wait, wake=wake, stall_seconds=self.stall_seconds
            )
            self.merge.tracking = True
            self.tail.start()
            try:
                yield from self._live(wake)
            finally:
                self.tail.stop()

    def _poll(self, checked: float) -> Iterator[LogLine]:
        """Polling alone: a round of every stream every ``poll_seconds`` (paced), until the end."""
        self._phase = "poll"
        while True:
            start = self.clock()
            calls = sum(self.calls.values())
            yield from self._round(drain=False)
            if self.clock() - checked >= self.status_seconds:
                checked = self.clock()
                if self._job_done():
                    yield from self._final([])
                    return
            made = sum(self.calls.values()) - calls
            pause = max(self.poll_seconds, made / self.max_calls_per_second) - (self.clock() - start)
            if pause > 0:
                self.sleep(pause)

    def _live(self, wake: threading.Event) -> Iterator[LogLine]:
        """The live tail shows lines; the ground truth fills in where it cannot be trusted."""
        tail = self.tail
        assert tail is not None
        checked = self.clock()
        reconcile = True  # what was ingested before the first session
        held: list[TailUpdate] = []  # updates waiting for a ground-truth read, in order
        next_reconcile = next_verify = next_poll = self.clock()
        while True:
            wake.clear()
            while tail.notes:
                self.notify(tail.notes.popleft())
            if tail.state == "unavailable":
                self.notify(
                    f"CloudWatch Logs Live Tail is not available here ({tail.reason}); reading every "
                    f"stream every {self.poll_seconds:g} s instead — no line will be lost"
                )
                held += tail.take()
                yield from self._show_tail(held)
                yield from self._poll(checked)
                return
            for item in tail.take():
                reconcile = reconcile or item.start or item.sampled or item.stalled
                if item.start:
                    continue
                if reconcile:
                    held.append(item)
                else:
                    yield from self._show_tail([item])
            now = self.clock()
            live = tail.live(now)
            if not live and now >= next_poll:  # connecting, or down: read every stream meanwhile
                calls = sum(self.calls.values())
                self._phase = "poll"
                yield from self._round(drain=False)
                next_poll = next_reconcile = now + self._pace(calls)
            elif live and reconcile and now >= next_reconcile:
                calls = sum(self.calls.values())
                self._phase = "reconcile"
                yield from self._round(drain=False, every=True)
                self.reconciles += 1
                reconcile = False
                yield from self._show_tail(held)
                held = []
                next_reconcile = now + self._pace(calls)
                next_verify = self.clock() + self.verify_seconds
            elif live and not reconcile and now >= next_verify:
                yield from self._verify_one()
                next_verify = self.clock() + self.verify_seconds
            if self.clock() - checked >= self.status_seconds:
                checked = self.clock()
                if self._job_done():
                    yield from self._final(held + tail.take(), trusted=not reconcile and tail.live(self.clock()))
                    return
            if not tail.live(self.clock()):
                until = next_poll
            elif reconcile:
                until = min(next_reconcile, checked + self.status_seconds)
            else:
                until = min(next_verify, checked + self.status_seconds)
            self.wait(wake, until - self.clock())

    def _pace(self, calls: int) -> float:
        """Seconds from the start of a read of every stream to the next: ``poll_seconds``, or more
        when it made more calls than ``max_calls_per_second`` allows."""
        return max(self.poll_seconds, (sum(self.calls.values()) - calls) / self.max_calls_per_second)

    def _final(self, held: list[TailUpdate], trusted: bool = False) -> Iterator[LogLine]:
        """The job is over: after the grace, what the tail delivered meanwhile (when nothing waits
        for a ground-truth read: the sweep below takes a call or two per stream before it shows
        anything), every stream once more to its end, then what the tail still held."""
        self.sleep(self.final_grace_seconds)
        if trusted and self.tail is not None:
            yield from self._show_tail(held + self.tail.take())
            held = []
        self._phase = "final"
        yield from self._round(drain=True)
        yield from self._show_tail(held + (self.tail.take() if self.tail else []))

    def _verify_one(self) -> Iterator[LogLine]:
        """The ground truth walks behind the tail: one stream per call, in turn."""
        if not self.streams:
            return
        names = sorted(self.streams)
        stream = self.streams[names[self._verify_next % len(names)]]
        self._verify_next += 1
        self._phase = "verify"
        events = self._read(stream, drain=False)
        self.verifies += 1
        yield from self._lines([(stream, events)])
        self.merge.prune()  # what the ground truth passed is forgotten a while later

    def _show_tail(self, items: Iterable[TailUpdate]) -> Iterator[LogLine]:
        for item in items:
            found = []
            for event in item.events:
                name = event.get("logStreamName", "")
                stream = self.streams.get(name)
                if stream is None:  # a new stream, found by the tail: no DescribeLogStreams needed
                    stream = self.streams[name] = _Stream(name, replica_name(name))
                if self.merge.from_tail(name, event, item.session):
                    found.append((stream, event))
            before = self.shown
            yield from self._lines([(s, [e]) for s, e in found], merged=True)
            self.from_tail += self.shown - before

    def _lines(self, read: list[tuple[_Stream, list[dict[str, Any]]]], merged: bool = False) -> Iterator[LogLine]:
        """Events that arrived together, as lines: new ones only, in timestamp order, late ones marked."""
        lines = []
        for stream, events in read:
            for event in events:
                if merged or self.merge.from_ground_truth(stream.name, event):
                    lines.append(
                        LogLine(
                            timestamp=dt.datetime.fromtimestamp(event["timestamp"] / 1000, dt.timezone.utc),
                            replica=stream.replica,
                            message=event["message"].rstrip("\n"),
                            receive_timestamp=_ms(event.get("ingestionTime")),
                        )
                    )
        self.shown += len(lines)
        yield from self.marker.batch(lines)

    # -- one round ---------------------------------------------------------------------

    def _round(self, drain: bool, every: bool = False) -> Iterator[LogLine]:
        """A read of the streams: with ``drain`` each to its very end (a page that says so), with
        ``every`` each stream, idle or not, once up to now (a page short of full)."""
        if drain or every or self._discovery_due():
            self._discover()
        read: list[tuple[_Stream, list[dict[str, Any]]]] = []
        for stream in list(self.streams.values()):
            if not drain and not every and stream.wait > 0:
                stream.wait -= 1
                continue
            events = self._read(stream, drain)
            if events:
                stream.idle = stream.wait = 0
            else:
                stream.idle += 1
                stream.wait = min(2 ** (stream.idle - 1) - 1, self.idle_rounds_max - 1) if stream.idle > 1 else 0
            read.append((stream, events))
        yield from self._lines(read)
        if self.merge.tracking:
            self.merge.prune()

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
            self.phase_calls[self._phase] += 1
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
                answer: dict[str, Any] = page
                return answer
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


def _ms(value: int | None) -> dt.datetime | None:
    return None if value is None else dt.datetime.fromtimestamp(value / 1000, dt.timezone.utc)


def _transient(exc: BaseException) -> bool:
    import botocore.exceptions as bx

    if isinstance(
        exc, (bx.EndpointConnectionError, bx.ConnectionClosedError, bx.ReadTimeoutError, bx.ConnectTimeoutError)
    ):
        return True
    response = getattr(exc, "response", None)
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) if isinstance(response, dict) else 0
    return status >= 500 or error_code(exc) in ("ServiceUnavailableException", "InternalFailure")
