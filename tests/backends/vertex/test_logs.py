"""The log follower on its own: an in-memory Cloud Logging and a virtual clock, no server."""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import re
import threading

import pytest
from google.api_core import exceptions

from cloudtrain.backends.base import JobState, JobStatus
from cloudtrain.backends.vertex.cloud_logging import TailBatch
from cloudtrain.backends.vertex.logs import Entry, LogTailer, TailPolicy, _Tail, log_filter
from cloudtrain.errors import BackendError, CloudUnreachable, ExitCode
from tests.fakes import VirtualClock

T0 = 1_700_000_000.0


def ts(t: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc)


class MemoryLog:
    """A PageReader: entries received (readable) at a given virtual time, faults raised on demand."""

    def __init__(self, clock: VirtualClock, lag: float = 0.0):
        self.clock, self.lag = clock, lag
        self.items: list[tuple[dt.datetime, str, float, Entry]] = []  # sorted by (timestamp, insertId)
        self.faults: list[Exception] = []
        self.calls: list[float] = []

    def add(self, replica: str, message: str, at: float, readable: float | None = None, insert_id: str | None = None):
        readable = at if readable is None else readable
        entry = Entry(ts(at), insert_id or f"i{len(self.items):07d}", replica, "INFO", message, ts(readable))
        bisect.insort(self.items, (entry.timestamp, entry.insert_id, readable, entry))
        return entry.insert_id

    def __call__(self, filter: str, page_token: str | None, page_size: int) -> tuple[list[Entry], str | None]:
        self.calls.append(self.clock.time())
        if self.faults:
            raise self.faults.pop(0)
        received = re.search(r'receiveTimestamp>="([^"]+)"', filter)
        assert received is not None, f"no receiveTimestamp floor in {filter}"
        floor = dt.datetime.fromisoformat(received[1]).timestamp()
        now, start = self.clock.time(), int(page_token or 0)
        found = [e for _, _, readable, e in self.items if floor <= readable <= now - self.lag]
        page = found[start : start + page_size]
        return page, (str(start + page_size) if len(found) > start + page_size else None)


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


def tailer(log, clock, status, notes: list[str] | None = None, **policy) -> LogTailer:
    notify = notes.append if notes is not None else (lambda message: None)
    return LogTailer(
        log,
        "1",
        start=ts(T0),
        job_status=status,
        policy=TailPolicy(**policy),
        clock=clock.time,
        sleep=clock.sleep,
        notify=notify,
    )


def test_filter_reads_by_receive_time():
    assert log_filter("42", ts(T0)) == (
        'resource.type="ml_job" AND resource.labels.job_id="42" AND receiveTimestamp>="2023-11-14T22:13:20.000000Z"'
    )


def test_ten_minutes_late_shown_once_when_it_arrives_marked_late(clock):
    log = MemoryLog(clock)
    for i in range(100):
        log.add("workerpool0-0", f"a{i}", at=T0 + 10 + i * 5)
    log.add("workerpool0-0", "late by 10 min", at=T0 + 30.25, readable=T0 + 630.25)  # the previous follower lost it
    status = timeline(clock, (0, JobState.RUNNING), (600, JobState.SUCCEEDED))
    t = tailer(log, clock, status, drain=60)
    lines, printed_at = [], {}
    for line in t.follow():
        lines.append(line)
        printed_at[line.message] = clock.time()
    assert len(lines) == len({line.message for line in lines}) == 101
    late = [line for line in lines if line.late]
    assert [line.message for line in late] == ["late by 10 min"] and late[0].timestamp == ts(T0 + 30.25)
    assert printed_at["late by 10 min"] - (T0 + 630.25) <= 10.0  # at the next poll: never held back
    assert t.stop_note and "cloudtrain logs 1" in t.stop_note


def test_duplicates_by_insert_id_are_shown_once(clock):
    log = MemoryLog(clock)
    first = log.add("workerpool0-0", "once", at=T0 + 5)
    log.add("workerpool0-0", "once", at=T0 + 5, readable=T0 + 200, insert_id=first)  # delivered again, later
    log.add("workerpool0-0", "after", at=T0 + 6)
    status = timeline(clock, (0, JobState.RUNNING), (250, JobState.SUCCEEDED))
    assert [line.message for line in tailer(log, clock, status).follow()] == ["once", "after"]


def test_indexing_lag_within_the_margin_loses_nothing(clock):
    log = MemoryLog(clock, lag=20)  # listable 20 s after Cloud Logging received it; margin is 30 s
    for i in range(300):
        log.add(f"workerpool0-{i % 3}", f"m{i}", at=T0 + i, readable=T0 + i + (i % 7) * 30)
    status = timeline(clock, (0, JobState.RUNNING), (320, JobState.SUCCEEDED))
    lines = [line.message for line in tailer(log, clock, status).follow()]
    assert sorted(lines) == sorted(f"m{i}" for i in range(300)) and len(lines) == 300


def test_memory_is_bounded_by_the_margin_and_forget_window(clock):
    log = MemoryLog(clock)
    for i in range(6_000):  # 100 minutes at one line per second
        log.add("workerpool0-0", f"m{i}", at=T0 + i)
    t = tailer(log, clock, timeline(clock, (0, JobState.RUNNING), (6_010, JobState.SUCCEEDED)), forget_after=60)
    peak = shown = 0
    for _ in t.follow():
        shown += 1
        peak = max(peak, len(t.seen))
    assert shown == 6_000
    assert peak <= 30 + 60 + 2 * 10 + 10  # margin + forget window + two reads, never the whole history


def test_interval_one_second_while_busy_backs_off_to_cap_while_idle(clock):
    log = MemoryLog(clock)
    for i in range(60):
        log.add("workerpool0-0", f"busy {i}", at=T0 + i)  # readable as written
    status = timeline(clock, (0, JobState.RUNNING), (400, JobState.SUCCEEDED))
    t = tailer(log, clock, status)
    list(t.follow())
    busy = [b - a for a, b in itertools.pairwise(log.calls) if a < T0 + 55]
    idle = [b - a for a, b in itertools.pairwise(log.calls) if T0 + 120 < a < T0 + 390]  # before the end's drain
    assert max(busy) <= 1.5 and sum(busy) / len(busy) <= 1.25  # about one read a second, within budget
    assert idle and min(idle) >= 9.9 and max(idle) <= 10.01  # backed off to the 10 s cap


def test_never_more_than_budget_plus_burst_reads_in_any_minute(clock):
    log = MemoryLog(clock)
    for i in range(15_000):  # a chatty job: 50 lines/s, pages of 100 → several pages per read
        log.add("workerpool0-0", f"x{i}", at=T0 + i / 50)
    status = timeline(clock, (0, JobState.RUNNING), (300, JobState.SUCCEEDED))
    t = tailer(log, clock, status, page_size=100, margin=2)
    assert sum(1 for _ in t.follow()) == 15_000
    calls = log.calls
    worst = max(sum(1 for c in calls if a <= c < a + 60) for a in calls)
    assert worst <= 55


def test_resource_exhausted_slows_reads_and_loses_nothing(clock):
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
    gaps = [b - a for a, b in itertools.pairwise(log.calls[mark:])]
    # 4 s (less whatever the read budget already waited), then 8 s, 16 s: doubling from the 4 s floor
    assert gaps[0] >= 2.5 and gaps[1:3] == pytest.approx([8, 16], abs=0.01)
    assert all(g >= 1 for g in gaps)


def test_an_outage_prints_one_line_lost_one_back_and_loses_nothing(clock):
    log = MemoryLog(clock)
    for i in range(200):
        log.add("workerpool0-0", f"o{i}", at=T0 + i)
    status = timeline(clock, (0, JobState.RUNNING), (210, JobState.SUCCEEDED))
    notes: list[str] = []
    t = tailer(log, clock, status, notes)
    lines = []
    for line in t.follow():
        lines.append(line.message)
        if len(lines) == 50:  # about 40 s of refused connections and 503s
            log.faults = [exceptions.ServiceUnavailable("503 connection refused")] * 5 + [
                exceptions.InternalServerError("500"),
                exceptions.DeadlineExceeded("slow"),
            ]
    assert lines == [f"o{i}" for i in range(200)]  # every line once, in order
    assert [n.split(" (")[0].split(" after")[0] for n in notes] == [
        "lost the connection to Cloud Logging",
        "connection to Cloud Logging is back",
    ]


def test_an_outage_longer_than_the_job_could_run_ends_with_exit_3(clock):
    log = MemoryLog(clock)
    log.add("workerpool0-0", "one", at=T0 + 1)
    log.faults = [exceptions.ServiceUnavailable("down")] * 1000
    status = timeline(clock, (0, JobState.RUNNING))
    with pytest.raises(CloudUnreachable, match="could not reach Cloud Logging") as info:
        list(tailer(log, clock, status, give_up_after=600).follow())
    assert info.value.exit_code == ExitCode.UNREACHABLE == 3
    assert "cloudtrain logs 1 --follow" in str(info.value)


def test_permission_denied_is_explained(clock):
    log = MemoryLog(clock)
    log.faults = [exceptions.PermissionDenied("403 logging.logEntries.list denied")]
    status = timeline(clock, (0, JobState.RUNNING), (20, JobState.SUCCEEDED))
    with pytest.raises(BackendError, match="logging.viewer"):
        list(tailer(log, clock, status).follow())


def test_stop_rule_waits_for_drain_quiet_seconds_after_the_last_new_line(clock):
    log = MemoryLog(clock)
    log.add("workerpool0-0", "before end", at=T0 + 59, readable=T0 + 63)  # readable 3 s after the end
    log.add("workerpool0-0", "50 s after the end", at=T0 + 59.5, readable=T0 + 110)
    log.add("workerpool0-0", "after the drain", at=T0 + 59.9, readable=T0 + 300)
    status = timeline(clock, (0, JobState.RUNNING), (60, JobState.FAILED))
    t = tailer(log, clock, status)
    assert [line.message for line in t.follow()] == ["before end", "50 s after the end"]
    assert T0 + 110 + 60 <= clock.time() <= T0 + 110 + 60 + 11  # 60 quiet seconds after the last new line
    assert "no new lines for 60 s" in str(t.stop_note)
    t = tailer(log, clock, status, drain=300)
    assert [line.message for line in t.follow()][-1] == "after the drain"  # --drain 5m waits for it


def test_read_all_is_one_pass(clock):
    log = MemoryLog(clock)
    for i in range(2500):
        log.add("workerpool0-0", f"h{i}", at=T0 + i)
    clock.now = T0 + 3000
    t = tailer(log, clock, timeline(clock, (0, JobState.RUNNING)))
    assert [line.message for line in t.read_all()] == [f"h{i}" for i in range(2500)]
    assert t.requests == 3  # pages of 1000


def test_a_read_of_many_pages_does_not_hold_the_live_tail_back():
    """While the read budget refills between the pages of a ground-truth read, the live tail's
    lines are shown, not held until the read ends (60 replicas: 3 pages or more per read)."""
    clock = VirtualClock(T0)
    log = MemoryLog(clock)
    for i in range(6):
        log.add("workerpool0-0", f"old {i}", at=T0 - 10 + i)
    tailer = LogTailer(
        log,
        "1",
        start=ts(T0 - 60),
        job_status=timeline(clock, (0, JobState.RUNNING)),
        policy=TailPolicy(page_size=2, burst=1),
        clock=clock.time,
        sleep=clock.sleep,
    )

    wake = threading.Event()
    live = _Tail(lambda filter, buffer_window: iter(()), "", TailPolicy(), wake, lambda event, seconds: False)
    live.state = "live"  # a live TailLogEntries (never started) with one response waiting
    live.batches.append(TailBatch([Entry(ts(T0), "t1", "workerpool1-0", "INFO", "from the tail", ts(T0))]))
    tailer.tail, tailer._wake = live, wake
    shown = [line.message for line in tailer.read()]
    assert sorted(shown) == sorted([f"old {i}" for i in range(6)] + ["from the tail"])
    assert shown.index("from the tail") < shown.index("old 2"), "shown before the read's second page"
    assert len(log.calls) == 3 and log.calls[1] > log.calls[0], "the second page waited for the budget"
