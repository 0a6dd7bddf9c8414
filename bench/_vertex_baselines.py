"""The Vertex log followers cloudtrain is measured against, re-implemented for the benches only.

Both read through the same ``entries.list`` page reader as cloudtrain
(``cloudtrain.backends.vertex.cloud_logging.CloudLoggingReader``) on a virtual clock
(``clock.time`` / ``clock.sleep``), and yield ``(replica, message, late, clock time)``.

**The previous cloudtrain follower** (:class:`PreviousFollower`; BASELINE, not used by
cloudtrain). cloudtrain's own Vertex follower as it was before commit 79b4f06 (see
``git show 79b4f06^:cloudtrain/backends/vertex/logs.py``): its algorithm kept as it was —
reads ``timestamp>=`` the newest timestamp seen minus a 60 s look-back, ordered by timestamp,
following page tokens, insertIds already shown skipped; about a read a second while lines
flow, doubling to 10 s while quiet, at most 50 reads a minute (same token bucket); after
the job's end, the first read 5 s after the end time, then a read every 2 s until 20 s
passed since both the end and the last new line, or 45 s after the end. A line that becomes
readable when the newest timestamp seen is more than 60 s past its own is never read. The
bench injects no faults, so the old retry branches are left out.

**gcloud** (:func:`follow_gcloud`). The behaviour of Google Cloud SDK 578.0.0
(github.com/google-cloud-sdk-unofficial/google-cloud-sdk, tag 578.0.0), implemented here
from what its source does (none of its code is copied):

* ``lib/googlecloudsdk/command_lib/logs/stream.py``: ``LogFetcher`` (l. 169-252) runs two
  tasks on one timer, ``_TaskIntervalTimer`` (l. 111-166): POLL every ``polling_interval``
  and CHECK_CONTINUE every ``continue_interval``, both at once at the start (l. 237-238).
  A poll (``GetLogs``, l. 203-221) asks for entries with ``timestamp`` at or after the
  position (l. 81-92: ``timestamp>=`` the position, or the same timestamp with a larger
  insertId) and ``timestamp`` older than now − 5 s (``GetFilterUpperBound``, l. 94-108),
  ascending, at most ``LOG_BATCH_SIZE`` = 1000 entries (l. 176; one request, since
  ``api_lib/logging/common.py`` ``FetchLogs`` asks for pages of min(limit, 1000), l. 79-81),
  and keeps only entries that move the position forward (``LogPosition.Update``, l. 52-79):
  an entry whose timestamp is behind the position is never shown. ``YieldLogs``
  (l. 223-252) counts consecutive polls that showed nothing (``empty_polls``, reset by a
  poll that showed a line) and stops when the continue function says so.
* ``lib/googlecloudsdk/command_lib/ml_engine/log_utils.py`` ``MakeContinueFunction``
  (l. 60-88), used by ``gcloud ml-engine jobs submit training --stream-logs`` and
  ``gcloud ml-engine jobs stream-logs`` (``command_lib/ml_engine/jobs_util.py`` l. 292-297
  and 422-426): continue while ``empty_polls <= 1`` (l. 86); otherwise fetch the job and
  continue while it has no ``endTime`` (l. 88). ``continue_interval`` is 10 s
  (``jobs_util.py`` l. 43); ``polling_interval`` is the ``ml_engine/polling_interval``
  property, default 60 s (``core/properties.py`` l. 2796-2800, ``--polling-interval``
  in ``command_lib/ml_engine/flags.py`` l. 381-388). So it stops at the first job check
  after the job has ended *and* two polls in a row showed nothing: at least two polling
  intervals (about 2 minutes) after the last line it found.
* ``gcloud ai custom-jobs stream-logs`` (``lib/surface/ai/custom_jobs/stream_logs.py``
  l. 48-61, ``command_lib/ai/log_util.py`` l. 30 and 33-51, default ``--polling-interval``
  60 s in ``command_lib/ai/flags.py`` l. 38-45) uses the same fetcher, but its continue
  function (``api_lib/ai/custom_jobs/client.py`` ``CheckJobComplete``, l. 106-124) fetches the
  job once, when the command starts (l. 117), and then tests that one response's
  ``endTime`` (l. 122): started on a running job, it never stops on its own
  (``recheck_job=False`` below; the bench ends it, as a user's Ctrl-C would).

The fake understands ``timestamp>=`` and ``timestamp<`` but not gcloud's
``(timestamp="T" AND insertId>"I") OR timestamp>"T"`` form; :func:`follow_gcloud` sends
``timestamp>="T"`` and drops the entries at the position client-side, which shows the same
lines unless more than 1000 entries share one timestamp (never in these benches).
"""

from __future__ import annotations

import datetime as dt
import heapq
from collections.abc import Callable, Iterator

from cloudtrain.backends.base import JobStatus
from cloudtrain.backends.vertex.cloud_logging import job_filter, stamp
from cloudtrain.backends.vertex.logs import ReadBudget

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
Shown = tuple[str, str, bool, float]  # replica, message, marked late, clock time it was yielded


def _utc(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)


# -- the previous cloudtrain follower (before 79b4f06) ---------------------------------------


class PreviousFollower:
    """BASELINE: cloudtrain's Vertex follower before 79b4f06 (60 s look-back on ``timestamp``)."""

    min_interval, idle_factor, idle_cap = 1.0, 2.0, 10.0
    reads_per_minute, burst = 50, 5
    lookback = 60.0
    status_every = 5.0
    final_settle, final_quiet, final_drain = 5.0, 20.0, 45.0
    page_size = 1000

    def __init__(
        self,
        reader,
        job_id: str,
        *,
        start: dt.datetime,
        job_status: Callable[[], JobStatus],
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ):
        self.reader, self.job_id, self.job_status = reader, job_id, job_status
        self.clock, self.sleep = clock, sleep
        self.start = start
        self.budget = ReadBudget(self.reads_per_minute, self.burst, clock, sleep)
        self.newest: dt.datetime | None = None
        self.seen: set[str] = set()
        self._by_time: list[tuple[dt.datetime, str]] = []
        self.shown = 0

    def floor(self) -> dt.datetime:
        if self.newest is None:
            return self.start
        return max(self.start, self.newest - dt.timedelta(seconds=self.lookback))

    def read(self) -> Iterator[Shown]:
        query = f'{job_filter(self.job_id)} AND timestamp>="{stamp(self.floor())}"'
        token = None
        while True:
            self.budget.acquire()
            entries, token = self.reader(query, token, self.page_size)
            for e in sorted(entries, key=lambda e: e.timestamp):
                if e.insert_id in self.seen:
                    continue
                self.seen.add(e.insert_id)
                heapq.heappush(self._by_time, (e.timestamp, e.insert_id))
                if self.newest is None or e.timestamp > self.newest:
                    self.newest = e.timestamp
                self.shown += 1
                yield e.replica, e.message, False, self.clock()
            if not token:
                break
        floor = self.floor()
        while self._by_time and self._by_time[0][0] < floor:
            self.seen.discard(heapq.heappop(self._by_time)[1])

    def follow(self) -> Iterator[Shown]:
        interval, running = self.min_interval, False
        next_status = self.clock()
        while True:
            began = self.clock()
            if began >= next_status:
                status = self.job_status()
                next_status = began + self.status_every
                if status.state.terminal:
                    yield from self._drain(status)
                    return
                if status.state.name == "RUNNING" and not running:
                    interval = self.min_interval
                running = status.state.name == "RUNNING"
            before = self.shown
            yield from self.read()
            interval = self.min_interval if self.shown > before else min(interval * self.idle_factor, self.idle_cap)
            self._sleep_until(began + interval)

    def _drain(self, status: JobStatus) -> Iterator[Shown]:
        ended = (status.ended - _EPOCH).total_seconds() if status.ended else self.clock()
        self._sleep_until(ended + self.final_settle)
        last_new = ended
        while True:
            before = self.shown
            yield from self.read()
            now = self.clock()
            if self.shown > before:
                last_new = now
            if now - last_new >= self.final_quiet or now >= ended + self.final_drain:
                return
            self._sleep_until(now + 2 * self.min_interval)

    def _sleep_until(self, when: float) -> None:
        if when > self.clock():
            self.sleep(when - self.clock())


# -- gcloud ----------------------------------------------------------------------------------


def follow_gcloud(
    reader,
    job_id: str,
    *,
    start: dt.datetime,
    job_status: Callable[[], JobStatus],
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    polling_interval: float = 60.0,
    continue_interval: float = 10.0,
    recheck_job: bool = True,
    give_up_at: float | None = None,
) -> Iterator[Shown]:
    """gcloud's LogFetcher with the ml-engine continue function (``recheck_job``) or the
    ai custom-jobs one (the job as fetched at the start). ``give_up_at``: the bench's Ctrl-C."""
    position = (start, "")  # LogPosition: (timestamp, insertId)
    first = job_status()
    intervals = {"poll": polling_interval, "check": continue_interval}
    remaining = dict(intervals)
    tasks = set(intervals)  # both at the start
    empty_polls = 0
    while True:
        if "poll" in tasks:
            upper = _utc(clock() - 5.0)
            query = f'{job_filter(job_id)} AND timestamp>="{stamp(position[0])}" AND timestamp<"{stamp(upper)}"'
            entries, _ = reader(query, None, 1000)
            shown = 0
            for e in entries:
                if (e.timestamp, e.insert_id) > position:
                    position = (e.timestamp, e.insert_id)
                    shown += 1
                    yield e.replica, e.message, False, clock()
            empty_polls = 0 if shown else empty_polls + 1
        if "check" in tasks and empty_polls > 1:
            status = job_status() if recheck_job else first
            if status.ended is not None:
                return
        if give_up_at is not None and clock() >= give_up_at:
            return
        step = min(remaining.values())
        sleep(step)
        tasks = set()
        for task in remaining:
            remaining[task] -= step
            if remaining[task] <= 0:
                remaining[task] = intervals[task]
                tasks.add(task)
