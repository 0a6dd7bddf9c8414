"""Follow a Vertex AI job's output in Cloud Logging: nothing lost however late, each line once, fast.

The live view is ``TailLogEntries`` on a background thread (lines within about a second). The ground truth is
``entries.list`` filtered on ``receiveTimestamp``, a clock that only moves forward, unlike an entry's own
``timestamp``: each read asks for everything received from a *floor* on and skips insertIds already shown. After a
complete read the floor moves to the newest receive time seen *before that read began*, minus ``margin`` (30 s):
an entry received before that was readable when the read began (if Cloud Logging indexes within ``margin``), so
nothing is lost and only ``margin`` seconds are read twice. insertIds are kept ``forget_after`` behind the floor.
A tail response with ``suppression_info`` (entries dropped) triggers a ground-truth read at once; where the tail
is ``UNIMPLEMENTED`` or down, the ground truth is read at the polling pace, with the same guarantee. Lines that
arrive together are shown in timestamp order per replica; an older one than already shown is shown at once, with
``late=True``.

Quota: 60 ``entries.list`` a minute per project, shared by every reader. With a tail a follower reads every
``verify_every`` (15 s), at most ``tail_reads_per_minute`` (10), so six followers fit; polling alone it reads
about once a second while lines flow, every 10 s when quiet, at most ``reads_per_minute`` (50,
``CLOUDTRAIN_LOG_READS_PER_MINUTE``). ``RESOURCE_EXHAUSTED`` doubles the shortest interval (4 s to 60 s). Outages
(UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, dropped connections) are retried with backoff (``follow.Outage``) from
the same floor; only one longer than ``give_up_after`` ends the follow, exit code 3. Once the job is terminal,
reading stops after ``drain`` seconds (``--drain``, 60) with nothing new, counted from the later of the job's end
and the last new line, and a ground-truth read begun after that found nothing; later stragglers are for
``cloudtrain logs JOB``."""

from __future__ import annotations

import collections
import datetime as dt
import heapq
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from cloudtrain.backends.base import JobState, JobStatus, LogLine
from cloudtrain.backends.follow import LateMarker, Notify, Outage, default_notify, event_waiter, log
from cloudtrain.backends.vertex.cloud_logging import Entry, TailBatch, job_filter, log_filter
from cloudtrain.backoff import Backoff
from cloudtrain.errors import BackendError, CloudSetupError, CloudUnreachable
from cloudtrain.text import first_line

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
__all__ = ["Entry", "LogTailer", "TailPolicy", "log_filter"]


class PageReader(Protocol):
    def __call__(self, filter: str, page_token: str | None, page_size: int) -> tuple[list[Entry], str | None]:
        """One ``entries.list`` request: a page of entries and the next page token (or None)."""
        ...


class TailOpener(Protocol):
    def __call__(self, filter: str, buffer_window: float) -> Any:
        """Open ``TailLogEntries``: an iterable of :class:`TailBatch` with ``cancel()``."""
        ...


@dataclass
class TailPolicy:
    min_interval: float = 1.0  # polling alone: seconds between reads while lines flow
    idle_factor: float = 2.0  # each empty read multiplies the interval by this …
    idle_cap: float = 10.0  # … up to this
    reads_per_minute: int = 50  # polling alone: list requests per minute, pages included
    tail_reads_per_minute: int = 10  # with a live tail
    verify_every: float = 15.0  # with a live tail: a ground-truth read this often
    burst: int = 5  # extra back-to-back reads allowed, for paging
    throttled_floor: float = 4.0  # the shortest interval right after a RESOURCE_EXHAUSTED
    throttled_cap: float = 60.0
    margin: float = 30.0  # receive-time margin behind the newest receive seen (Cloud Logging's indexing lag)
    forget_after: float = 600.0  # insertIds are remembered this long behind the floor
    status_every: float = 5.0  # check the job's state at most this often
    drain: float = 60.0  # after the end: stop once this long passed with nothing new
    tail: bool = True  # use TailLogEntries for the live view where the server has it
    buffer_window: float = (
        0.5  # TailLogEntries' buffer_window, seconds: the floor of the live delay (1.0 gave p50 1.04–1.14 s)
    )
    page_size: int = 1000
    retry_initial: float = 1.0  # outage backoff: 1 s, 2 s, 4 s … up to retry_cap, with jitter
    retry_cap: float = 30.0
    give_up_after: float = 24 * 3600.0  # an outage this long ends the follow (exit 3)


class ReadBudget:
    """Token bucket: ``per_minute`` sustained, ``burst`` back to back."""

    def __init__(self, per_minute: int, burst: int, clock: Callable[[], float], sleep: Callable[[float], None]):
        self.rate = per_minute / 60.0
        self.burst = float(max(burst, 1))
        self.tokens = self.burst
        self.clock, self.sleep = clock, sleep
        self.stamp = clock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def ready_in(self) -> float:
        """Seconds until a read may start without waiting."""
        self._refill()
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate

    def acquire(self) -> None:
        self._refill()
        if self.tokens < 1:
            self.sleep((1 - self.tokens) / self.rate)
            self.tokens, self.stamp = 1.0, self.clock()
        self.tokens -= 1


class _Tail(threading.Thread):
    """The live view: keeps a ``TailLogEntries`` stream open, reopening it after errors."""

    def __init__(
        self,
        opener: TailOpener,
        filter: str,
        policy: TailPolicy,
        wake: threading.Event,
        wait: Callable[[threading.Event, float], bool],
    ):
        super().__init__(daemon=True, name="cloudtrain-tail")
        self.opener, self.filter, self.policy, self.wake, self.wait = opener, filter, policy, wake, wait
        self.batches: collections.deque[TailBatch] = collections.deque()
        self.state = "connecting"  # → live, down, unimplemented
        self.stopping = threading.Event()
        self.stream: Any = None
        self.opened = 0
        self.backoff = Backoff(policy.retry_initial, policy.retry_cap)

    def run(self) -> None:
        from google.api_core import exceptions

        failures = 0
        while not self.stopping.is_set():
            try:
                self.stream = self.opener(self.filter, self.policy.buffer_window)
                self.opened += 1
                for batch in self.stream:
                    if self.state != "live":  # (re)opened: what was received before it needs a read
                        self.batches.append(TailBatch([], 0))
                    self.state, failures = "live", 0
                    if batch.entries or batch.suppressed:
                        self.batches.append(batch)
                    self.wake.set()
                    if self.stopping.is_set():
                        return
            except exceptions.MethodNotImplemented:
                self.state = "unimplemented"
                self.wake.set()
                return
            except Exception as exc:  # the ground truth covers the gap; the follower reports outages
                if self.stopping.is_set():
                    return
                log.debug("log tail interrupted: %s", exc)
                self.state = "down"
                self.batches.append(TailBatch([], 0))  # a gap: the next response's "previous" is unknown
                failures += 1
            self.wait(self.stopping, self.backoff.delay(max(failures, 1)))

    def take(self) -> list[TailBatch]:
        out = []
        while self.batches:
            out.append(self.batches.popleft())
        return out

    def stop(self) -> None:
        self.stopping.set()
        stream = self.stream
        if stream is not None:
            try:
                stream.cancel()
            except Exception:  # already ended
                pass


class LogTailer:
    """Lines of one job from Cloud Logging. ``read_page``, ``open_tail`` and ``job_status`` are injected."""

    def __init__(
        self,
        read_page: PageReader,
        job_id: str,
        *,
        start: dt.datetime,
        job_status: Callable[[], JobStatus],
        open_tail: TailOpener | None = None,
        policy: TailPolicy | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        wait: Callable[[threading.Event, float], bool] | None = None,
        notify: Notify = default_notify,
    ):
        self.read_page, self.job_id, self.job_status = read_page, job_id, job_status
        self.open_tail = open_tail
        self.policy = p = policy or TailPolicy()
        self.clock, self.sleep = clock, sleep
        self.wait = wait or event_waiter(None if sleep is time.sleep else sleep)
        self.notify = notify
        self.start = self.floor = start
        self.budget = ReadBudget(p.reads_per_minute, p.burst, clock, sleep)
        self.outage = Outage(
            "Cloud Logging",
            clock=clock,
            notify=notify,
            backoff=Backoff(p.retry_initial, p.retry_cap),
            give_up_after=p.give_up_after,
            reattach=f"cloudtrain logs {job_id} --follow",
        )
        self.marker = LateMarker()
        self.newest_receive: dt.datetime | None = None
        self.seen: dict[str, dt.datetime] = {}  # insertId → receive time
        self._by_receive: list[tuple[dt.datetime, str]] = []  # heap, to forget old insertIds
        self.requests = 0  # list requests made (for the bench and the tests)
        self.throttled = 0  # RESOURCE_EXHAUSTED received
        self.suppressed = 0  # entries the tail reported as dropped
        self.from_tail = 0  # lines first shown by the tail
        self.shown = 0
        self.stop_note: str | None = None  # the straggler hint, once the stop rule ended the follow
        self.tail: _Tail | None = None
        self._floor_interval = p.min_interval
        self._tail_receive: dt.datetime | None = None  # newest receive time of the previous tail response
        self._reread_from: dt.datetime | None = None
        self._wake: threading.Event | None = None  # set by the tail thread when it has lines

    # -- turning entries into lines -----------------------------------------------------

    def _show(self, entries: Iterable[Entry], *, tail: bool = False) -> list[LogLine]:
        lines = []
        for e in entries:
            receive = e.receive or e.timestamp
            if self.newest_receive is None or receive > self.newest_receive:
                self.newest_receive = receive
            if e.insert_id in self.seen:
                continue
            self.seen[e.insert_id] = receive
            heapq.heappush(self._by_receive, (receive, e.insert_id))
            lines.append(LogLine(e.timestamp, e.replica, e.message, e.severity, receive_timestamp=receive))
        self.shown += len(lines)
        self.from_tail += len(lines) if tail else 0
        return self.marker.batch(lines)

    def _forget(self) -> None:
        horizon = self.floor - dt.timedelta(seconds=self.policy.forget_after)
        while self._by_receive and self._by_receive[0][0] < horizon:
            _, insert_id = heapq.heappop(self._by_receive)
            if self.seen.get(insert_id, horizon) < horizon:
                del self.seen[insert_id]

    # -- the ground truth ---------------------------------------------------------------

    def read(self, floor: dt.datetime | None = None) -> Iterator[LogLine]:
        """One complete read of everything received from the floor on, across pages; raises on errors."""
        began_with = self.newest_receive
        query = log_filter(self.job_id, floor or self.floor)
        token: str | None = None
        while True:
            yield from self._tail_while_budget_refills()
            self.budget.acquire()
            self.requests += 1
            entries, token = self.read_page(query, token, self.policy.page_size)
            yield from self._show(entries)
            if not token:
                break
        if began_with is not None:
            self.floor = max(self.floor, began_with - dt.timedelta(seconds=self.policy.margin))
        self._forget()

    def _tail_while_budget_refills(self) -> Iterator[LogLine]:
        """Before each page of a ground-truth read: while the read budget refills, keep showing
        the live tail's lines. A read of many pages (60 replicas: 3 or more at the tail's 10 reads a
        minute) would otherwise hold the tail's lines back for as long as the budget waits."""
        while self._wake is not None and self._live() and (wait := self.budget.ready_in()) > 0:
            self._wake.clear()  # before taking: a batch that comes after the take sets it again
            yield from self._from_tail()
            self.wait(self._wake, wait)

    def read_all(self) -> Iterator[LogLine]:
        """Everything there is, once (retried until it succeeds): ``logs`` without ``--follow``."""
        from google.api_core import exceptions

        throttled = 0
        while True:
            try:
                yield from self.read(self.start)
                self.outage.ok()
                return
            except exceptions.ResourceExhausted:
                self.throttled, throttled = self.throttled + 1, throttled + 1
                self.sleep(min(self.policy.throttled_floor * 2 ** (throttled - 1), self.policy.throttled_cap))
            except _transient() as exc:
                self.sleep(self.outage.failed(exc))
            except exceptions.GoogleAPICallError as exc:
                raise _read_error(exc) from exc

    # -- following ----------------------------------------------------------------------

    def follow(self, drain: float | None = None) -> Iterator[LogLine]:
        """Lines as they arrive; ends by the stop rule once the job is terminal."""
        wake = self._wake = threading.Event()
        if self.open_tail is not None and self.policy.tail:
            self.tail = _Tail(self.open_tail, job_filter(self.job_id), self.policy, wake, self.wait)
            self.tail.start()
        try:
            yield from self._follow(self.policy.drain if drain is None else drain, wake)
        finally:
            if self.tail is not None:
                self.tail.stop()

    def _live(self) -> bool:
        return self.tail is not None and self.tail.state == "live"

    def _follow(self, drain: float, wake: threading.Event) -> Iterator[LogLine]:
        from google.api_core import exceptions

        p = self.policy
        interval = p.min_interval
        state: JobState | None = None
        ended: float | None = None  # clock time of the job's end, once terminal
        last_new = self.clock()
        next_status = next_read = self.clock()
        last_read_began: float | None = None
        while True:
            wake.clear()
            now = self.clock()
            if ended is None and now >= next_status:
                next_status = now + p.status_every
                try:
                    status = self.job_status()
                except CloudUnreachable as exc:
                    next_status = now + self.outage.failed(exc.__cause__ or exc)
                else:
                    if status.state.terminal:
                        ended = (status.ended - _EPOCH).total_seconds() if status.ended else now
                        next_read = min(next_read, now)
                    elif status.state is JobState.RUNNING and state is not JobState.RUNNING:
                        interval = self._floor_interval  # lines are about to flow
                        next_read = min(next_read, now + interval)
                    state = status.state
            for line in self._from_tail():
                last_new = self.clock()
                yield line
            if self._reread_from is not None:
                next_read = min(next_read, now)
            live = self._live()
            self.budget.rate = (p.tail_reads_per_minute if live else p.reads_per_minute) / 60.0
            if now >= next_read and live and self.budget.ready_in() > 0:
                next_read = now + self.budget.ready_in()  # never block the live view on the budget
            elif now >= next_read:
                began, before = now, self.shown
                try:
                    floor, self._reread_from = self._reread_from, None
                    for line in self.read(min(floor, self.floor) if floor else None):
                        last_new = self.clock()
                        yield line
                except exceptions.ResourceExhausted:
                    self.throttled += 1
                    self._floor_interval = min(max(self._floor_interval * 2, p.throttled_floor), p.throttled_cap)
                    next_read = self.clock() + max(interval, self._floor_interval)
                except _transient() as exc:
                    next_read = self.clock() + self.outage.failed(exc)
                except exceptions.GoogleAPICallError as exc:
                    raise _read_error(exc) from exc
                else:
                    self.outage.ok()
                    last_read_began = began
                    self._floor_interval = max(p.min_interval, self._floor_interval * 0.8)
                    if self.shown > before:
                        interval = self._floor_interval
                    else:
                        interval = min(interval * p.idle_factor, max(p.idle_cap, self._floor_interval))
                    next_read = began + (max(p.verify_every, self._floor_interval) if self._live() else interval)
            if ended is not None:
                quiet_from = max(ended, last_new)
                if last_read_began is not None and last_read_began >= quiet_from + drain:
                    self._stopped(drain)
                    return
                next_read = min(next_read, max(quiet_from + drain, self.clock()))
            until = min(next_read, next_status) if ended is None else next_read
            self.wait(wake, until - self.clock())

    def _from_tail(self) -> Iterator[LogLine]:
        if self.tail is None:
            return
        for batch in self.tail.take():
            if batch.suppressed:
                self.suppressed += batch.suppressed
                self._reread_from = self._tail_receive or self.floor
            if not batch.entries and not batch.suppressed:  # the stream broke or (re)opened: read what it missed
                self._tail_receive = None
                self._reread_from = self.floor
                continue
            yield from self._show(batch.entries, tail=True)
            receives = [e.receive for e in batch.entries if e.receive]
            if receives:
                self._tail_receive = max(receives)

    def _stopped(self, drain: float) -> None:
        self.stop_note = (
            f"no new lines for {drain:g} s after the job ended; stopped following. "
            f"Lines that arrive later: cloudtrain logs {self.job_id}"
        )
        log.info(self.stop_note)


def _transient() -> tuple[type[BaseException], ...]:
    from google.api_core import exceptions

    return (
        exceptions.ServiceUnavailable,
        exceptions.DeadlineExceeded,
        exceptions.InternalServerError,
        exceptions.Aborted,
        exceptions.Unknown,
    )


def _read_error(exc: Any) -> BackendError:
    if getattr(exc, "code", None) in (401, 403):
        hint = "reading logs needs roles/logging.viewer on the project"
        return CloudSetupError(f"Cloud Logging refused the read: {first_line(exc)}", hint)
    return BackendError(f"Cloud Logging refused the read: {first_line(exc)}")
