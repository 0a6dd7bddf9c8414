"""The log follower on its own: an in-memory Cloud Logging and a virtual clock, no server."""

from __future__ import annotations

import bisect
import datetime as dt
import re

import pytest
from google.api_core import exceptions

from cloudtrain.backends.base import JobState, JobStatus
from cloudtrain.backends.vertex.logs import Entry, LogTailer, TailPolicy, log_filter
from cloudtrain.errors import BackendError
from tests.fakes import VirtualClock

T0 = 1_700_000_000.0


def ts(t: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc)


class MemoryLog:
    """A PageReader: entries readable from a given virtual time, faults raised on demand."""

    def __init__(self, clock: VirtualClock):
        self.clock = clock
        self.items: list[tuple[dt.datetime, str, float, Entry]] = []  # sorted by (timestamp, insertId)
        self.faults: list[Exception] = []
        self.calls: list[float] = []

    def add(self, replica: str, message: str, at: float, readable: float | None = None) -> None:
        entry = Entry(ts(at), f"i{len(self.items):07d}", replica, "INFO", message)
        bisect.insort(self.items, (entry.timestamp, entry.insert_id, at if readable is None else readable, entry))

    def __call__(self, filter: str, token: str | None, size: int):
        self.calls.append(self.clock.time())
        if self.faults:
            raise self.faults.pop(0)
        floor = dt.datetime.fromisoformat(re.search(r'timestamp>="([^"]+)"', filter)[1])
        now, start = self.clock.time(), int(token or 0)
        page, i, skip = [], bisect.bisect_left(self.items, (floor,)), start
        while i < len(self.items) and len(page) <= size:
            stamp, _, readable, entry = self.items[i]
            i += 1
            if stamp.timestamp() > now:  # nothing is readable before it is written
                break
            if readable > now:
                continue
            if skip:
                skip -= 1
            else:
                page.append(entry)
        return page[:size], (str(start + size) if len(page) > size else None)


def timeline(clock: VirtualClock, *steps: tuple[float, JobState]):
    """job_status from (seconds after T0, state) steps."""

    def status() -> JobStatus:
        state = [s for t, s in steps if clock.time() - T0 >= t][-1]
        end = [t for t, s in steps if s.terminal]
        return JobStatus("1", "n", state, state.name, ended=ts(T0 + end[0]) if state.terminal else None)

    return status


@pytest.fixture
def clock():
    return VirtualClock(T0)


def tailer(log, clock, status, **policy) -> LogTailer:
    return LogTailer(log, "1", start=ts(T0), job_status=status, policy=TailPolicy(**policy), clock=clock.time, sleep=clock.sleep)


def test_filter_is_the_documented_one():
    assert log_filter("42", ts(T0)) == (
        'resource.type="ml_job" AND resource.labels.job_id="42" AND timestamp>="2023-11-14T22:13:20.000000Z"'
    )


def test_late_lines_shown_once_and_overlapping_reads_never_repeat(clock):
    log = MemoryLog(clock)
    for i in range(100):
        log.add("workerpool0-0", f"a{i}", at=T0 + 10 + i * 0.5)
    log.add("workerpool0-0", "late by 40 s", at=T0 + 30.25, readable=T0 + 70.25)  # gcloud drops this one
    status = timeline(clock, (0, JobState.RUNNING), (90, JobState.SUCCEEDED))
    lines = [l.message for l in tailer(log, clock, status).follow()]
    assert len(lines) == len(set(lines)) == 101
    assert "late by 40 s" in lines


def test_memory_is_one_lookback_window(clock):
    log = MemoryLog(clock)
    for i in range(6_000):  # 100 minutes at one line per second
        log.add("workerpool0-0", f"m{i}", at=T0 + i)
    t = tailer(log, clock, timeline(clock, (0, JobState.RUNNING), (6_010, JobState.SUCCEEDED)), lookback=60)
    peak = 0
    for n, _ in enumerate(t.follow(), 1):
        peak = max(peak, len(t.seen))
    assert n == 6_000
    assert peak <= 2 * 60 + 10  # never the whole history


def test_interval_one_second_while_busy_backs_off_to_cap_while_idle(clock):
    log = MemoryLog(clock)
    for i in range(60):
        log.add("workerpool0-0", f"busy {i}", at=T0 + i)  # readable as written
    status = timeline(clock, (0, JobState.RUNNING), (400, JobState.SUCCEEDED))
    t = tailer(log, clock, status, final_settle=0)
    list(t.follow())
    gaps = [b - a for a, b in zip(log.calls, log.calls[1:])]
    busy = [g for a, g in zip(log.calls, gaps) if a < T0 + 55]
    idle = [g for a, g in zip(log.calls, gaps) if T0 + 120 < a < T0 + 400]  # before the end's drain
    assert max(busy) <= 1.5 and sum(busy) / len(busy) <= 1.25  # about one read a second, within budget
    assert idle and min(idle) >= 9.9 and max(idle) <= 10.01  # backed off to the 10 s cap


def test_never_more_than_budget_plus_burst_reads_in_any_minute(clock):
    log = MemoryLog(clock)
    for i in range(15_000):  # a chatty job: 50 lines/s, pages of 100 → several pages per read
        log.add("workerpool0-0", f"x{i}", at=T0 + i / 50)
    status = timeline(clock, (0, JobState.RUNNING), (300, JobState.SUCCEEDED))
    t = tailer(log, clock, status, page_size=100, lookback=10)
    assert sum(1 for _ in t.follow()) == 15_000
    calls = log.calls
    worst = max(sum(1 for c in calls if a <= c < a + 60) for a in calls)
    assert worst <= 55


def test_429_slows_reads_and_loses_nothing(clock):
    log = MemoryLog(clock)
    for i in range(120):
        log.add("workerpool0-0", f"q{i}", at=T0 + i)
    status = timeline(clock, (0, JobState.RUNNING), (125, JobState.SUCCEEDED))
    t = tailer(log, clock, status)
    lines = []
    for line in t.follow():
        lines.append(line.message)
        if len(lines) == 30:
            log.faults = [exceptions.ResourceExhausted("429 Quota exceeded")] * 3
            mark = len(log.calls)
    assert lines == [f"q{i}" for i in range(120)]
    assert t.throttled == 3
    gaps = [b - a for a, b in zip(log.calls[mark:], log.calls[mark + 1 :])]
    # 4 s (less whatever the read budget already waited), then 8 s, 16 s: doubling from the 4 s floor
    assert gaps[0] >= 2.5 and gaps[1:3] == pytest.approx([8, 16], abs=0.01)
    assert all(g >= 1 for g in gaps)


def test_unavailable_is_retried_and_permission_denied_explained(clock):
    log = MemoryLog(clock)
    log.add("workerpool0-0", "one", at=T0 + 1)
    log.faults = [exceptions.ServiceUnavailable("down"), exceptions.DeadlineExceeded("slow")]
    status = timeline(clock, (0, JobState.RUNNING), (20, JobState.SUCCEEDED))
    assert [l.message for l in tailer(log, clock, status).follow()] == ["one"]

    log.faults = [exceptions.PermissionDenied("403 logging.logEntries.list denied")]
    with pytest.raises(BackendError, match="logging.viewer"):
        list(tailer(log, clock, status).follow())


def test_final_read_after_settle_catches_last_lines_then_stops(clock):
    log = MemoryLog(clock)
    log.add("workerpool0-0", "before end", at=T0 + 59, readable=T0 + 63)  # readable 3 s after the end
    status = timeline(clock, (0, JobState.RUNNING), (60, JobState.FAILED))
    t = tailer(log, clock, status)
    lines = [l.message for l in t.follow()]
    assert lines == ["before end"]
    # status every 5 s, then reads until 20 quiet seconds after the end: stopped promptly
    assert clock.time() < T0 + 60 + 5 + 20 + 2 + 1


def test_lines_flushed_well_after_the_end_are_still_shown_but_the_drain_is_bounded(clock):
    log = MemoryLog(clock)
    log.add("workerpool0-0", "flushed 14 s late", at=T0 + 59, readable=T0 + 74)
    log.add("workerpool0-0", "flushed 20 s late", at=T0 + 59.5, readable=T0 + 80)
    log.add("workerpool0-0", "much too late", at=T0 + 59.9, readable=T0 + 200)
    status = timeline(clock, (0, JobState.RUNNING), (60, JobState.SUCCEEDED))
    t = tailer(log, clock, status)
    assert [l.message for l in t.follow()] == ["flushed 14 s late", "flushed 20 s late"]
    assert clock.time() <= T0 + 60 + 45 + 3  # final_drain bounds the wait


def test_read_all_is_one_pass(clock):
    log = MemoryLog(clock)
    for i in range(2500):
        log.add("workerpool0-0", f"h{i}", at=T0 + i)
    clock.now = T0 + 3000
    t = tailer(log, clock, timeline(clock, (0, JobState.RUNNING)))
    assert [l.message for l in t.read_all()] == [f"h{i}" for i in range(2500)]
    assert t.requests == 3  # pages of 1000
