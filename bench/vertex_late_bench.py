"""Vertex log following with lines up to 10 minutes late: cloudtrain vs its previous follower vs gcloud.

One job per replica count (1, 8, 60) and seed, on the Cloud Logging fake
(``tests/fakes/cloud_logging.py``, a real gRPC server read through ``logging_v2``):

* PENDING 30 s, RUNNING ``--minutes`` (5), 15 s of teardown, SUCCEEDED. Each replica prints
  one line a second; its logging agent ships a batch every 5 s that Cloud Logging receives
  2 s later, plus a lateness drawn per batch: 90 % none, 5 % 10–40 s, 5 % 1–10 minutes
  (uniform). A batch's lines are received in shuffled order; 2 % of batches are delivered a
  second time (same insertIds) 5–120 s after the first; halfway through the run the live
  tail drops 50 entries and says so in ``suppression_info`` (only the tail sees that gap).
* Followers, each from the job's creation:

  - **cloudtrain**: ``cloudtrain.backends.vertex.logs.LogTailer`` as ``cloudtrain submit`` /
    ``logs --follow`` runs it (TailLogEntries live view + ``entries.list`` on
    ``receiveTimestamp``, default policy, ``--drain`` 60 s). Its live tail runs on a
    thread, so it runs on an accelerated real clock (``--speed`` virtual seconds per real
    second): its delays carry this machine's scheduling noise times the speed.
  - **cloudtrain, polling alone**: the same follower where the server has no
    TailLogEntries (its fallback), on a virtual clock.
  - **previous follower** (baseline): cloudtrain's follower before 79b4f06, a 60 s
    look-back on ``timestamp`` (``bench/_vertex_baselines.py``), virtual clock.
  - **gcloud ml-engine**: ``gcloud ml-engine jobs stream-logs`` / ``submit --stream-logs``
    as gcloud 578.0.0's source behaves (``bench/_vertex_baselines.py`` cites the files and
    lines): a poll every 60 s of at most 1000 entries after its position and older than
    now − 5 s, a job check every 10 s, stop at a check once the job has ended and two polls
    in a row showed nothing. Virtual clock.
  - **gcloud ai custom-jobs**: ``gcloud ai custom-jobs stream-logs``: the same fetcher, but
    it decides whether the job ended from the job as fetched when it started, so on a
    running job it never stops; the bench stops it 3 polls after the last line arrived
    (a user's Ctrl-C).

Figures per follower, replica count and seed: lines lost (readable when the follower last
read, never shown), lines that arrived only after its last read ("after the stop": not
lost, ``cloudtrain logs JOB`` shows them; the bench checks that its read, run afterwards,
returns every line), duplicates, lines shown out of order within a replica, delay from a
line's arrival (receiveTimestamp) to being yielded (p50, p95, max), ``entries.list`` calls
per minute while following and the most in any 60 s, and when it stopped after the job's
end. Across seeds: median and min–max, and for each baseline against cloudtrain a verdict
per figure — "no measurable difference" when their min–max ranges overlap
(``bench/_stats.py``).

    python -m bench.vertex_late_bench [--quick] [--repeats N] [--speed X] [--json PATH]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _stats
from bench._vertex_baselines import PreviousFollower, follow_gcloud
from cloudtrain.backends.base import JobState, JobStatus
from cloudtrain.backends.vertex import settings
from cloudtrain.backends.vertex.cloud_logging import CloudLoggingReader
from cloudtrain.backends.vertex.logs import LogTailer
from tests.fakes import AcceleratedClock, VirtualClock
from tests.fakes.cloud_logging import FakeLogging

JOB = "1000"
T0 = 1_700_000_000.0
PENDING, TEARDOWN = 30.0, 15.0
FLUSH, DELAY = 5.0, 2.0
SUPPRESSED = 50
FOLLOWERS = (
    "cloudtrain",
    "cloudtrain, polling alone",
    "previous follower",
    "gcloud ml-engine",
    "gcloud ai custom-jobs",
)
BASELINES = FOLLOWERS[1:]
FIGURES = (
    "lost",
    "after_stop",
    "duplicates",
    "out_of_order",
    "marked_late",
    "delay_p50_s",
    "delay_p95_s",
    "delay_max_s",
    "list_per_minute",
    "peak_list_in_60s",
    "stopped_after_end_s",
    "last_arrival_after_end_s",
)
VERDICT_FIGURES = ("lost", "duplicates", "delay_p50_s", "delay_p95_s", "list_per_minute")


def lateness(rng: random.Random) -> float:
    """Per batch: 90 % on time, 5 % 10–40 s late, 5 % 1–10 minutes late."""
    draw = rng.random()
    return rng.uniform(10, 40) if draw < 0.05 else rng.uniform(60, 600) if draw < 0.10 else 0.0


@dataclass(frozen=True)
class Job:
    replicas: int
    minutes: float
    seed: int

    @property
    def ends(self) -> float:
        return T0 + PENDING + self.minutes * 60 + TEARDOWN


def script(fake: FakeLogging, job: Job) -> dict[str, float]:
    """Write the job's lines into ``fake``; returns message → first receive time."""
    rng = random.Random(job.seed)
    first = T0 + PENDING + 1
    last = T0 + PENDING + job.minutes * 60
    for r in range(job.replicas):
        replica = "workerpool0-0" if r == 0 else f"workerpool1-{r - 1}"
        batches: dict[int, list[tuple[float, str]]] = {}
        n, t = 0, first + r * 0.37
        while t < last:
            batches.setdefault(math.ceil(t / FLUSH), []).append((t, f"{replica} line {n:06d}"))
            n, t = n + 1, first + r * 0.37 + n + 1
        for batch, lines in batches.items():
            received = batch * FLUSH + DELAY + lateness(rng)
            again = received + rng.uniform(5, 120) if rng.random() < 0.02 else None
            rng.shuffle(lines)
            for at, message in lines:
                insert_id = fake.add(JOB, replica, message, at=at, readable=received)
                if again is not None:
                    fake.add(JOB, replica, message, at=at, readable=again, insert_id=insert_id)
    return dict(fake.readable)


class JumpClock(AcceleratedClock):
    """An accelerated clock that can start over at a given virtual time and jump ahead."""

    def restart(self, at: float) -> None:
        self.start, self._origin = at, self._real()

    def advance(self, seconds: float) -> None:
        self.start += max(seconds, 0.0)


def job_status(clock, job: Job, on_midway: Callable[[], None] = lambda: None) -> Callable[[], JobStatus]:
    midway = T0 + PENDING + job.minutes * 30
    done: list[float] = []

    def status() -> JobStatus:
        now = clock.time()
        if now >= midway and not done:
            done.append(now)
            on_midway()
        state = JobState.PENDING if now < T0 + PENDING else JobState.RUNNING if now < job.ends else JobState.SUCCEEDED
        ended = dt.datetime.fromtimestamp(job.ends, dt.timezone.utc) if state.terminal else None
        return JobStatus(JOB, JOB, state, state.name, ended=ended)

    return status


def _start() -> dt.datetime:
    return dt.datetime.fromtimestamp(T0 - 60, dt.timezone.utc)  # as VertexBackend.logs: created − 1 minute


def _follow(follower: str, reader, clock, job: Job, fake: FakeLogging, arrivals: dict[str, float]) -> Iterator:
    """(replica, message, late, clock time) for each line the follower yields."""
    kw = dict(start=_start(), clock=clock.time, sleep=clock.sleep)
    if follower.startswith("cloudtrain"):

        def suppress() -> None:
            fake.suppress_next = SUPPRESSED

        tail = follower == "cloudtrain"
        tailer = LogTailer(
            reader,
            JOB,
            job_status=job_status(clock, job, suppress),
            notify=lambda m: None,
            open_tail=reader.tail if tail else None,
            wait=clock.wait if tail else None,
            **kw,
        )
        for line in tailer.follow():
            yield line.replica, line.message, line.late, clock.time()
    elif follower == "previous follower":
        yield from PreviousFollower(reader, JOB, job_status=job_status(clock, job), **kw).follow()
    else:
        ai = follower == "gcloud ai custom-jobs"
        give_up = max(arrivals.values()) + 3 * 60 if ai else None
        yield from follow_gcloud(
            reader, JOB, job_status=job_status(clock, job), recheck_job=not ai, give_up_at=give_up, **kw
        )


def run(job: Job, follower: str, speed: float = 20.0) -> dict:
    tail = follower == "cloudtrain"
    clock = JumpClock(T0, speed) if tail else VirtualClock(T0)
    fake = FakeLogging(clock)
    try:
        arrivals = script(fake, job)
        reader = CloudLoggingReader.connect("bench", settings.Endpoint(fake.address), settings.anonymous())
        if isinstance(clock, JumpClock):  # the tail's clock
            clock.restart(T0)
        shown = list(_follow(follower, reader, clock, job, fake, arrivals))
        stopped = clock.time()
        reads = [r.at for r in fake.reads]
        last_look = reads[-1] if reads else stopped
        figures = measure(shown, arrivals, reads, last_look, stopped, job)
        if follower.startswith("cloudtrain"):  # what `cloudtrain logs JOB` shows once every line arrived
            wait = max(arrivals.values()) + 1 - clock.time()
            if isinstance(clock, JumpClock):
                clock.advance(wait)
            else:
                clock.sleep(max(wait, 0.0))
            everything = LogTailer(
                reader, JOB, start=_start(), job_status=job_status(clock, job), clock=clock.time, sleep=clock.sleep
            ).read_all()
            figures["logs_after_shows"] = len({line.message for line in everything})
        return {"follower": follower, "replicas": job.replicas, "seed": job.seed, **figures}
    finally:
        fake.stop()


def measure(
    shown: list, arrivals: dict[str, float], reads: list[float], last_look: float, stopped: float, job: Job
) -> dict:
    messages = [m for _, m, _, _ in shown]
    once = set(messages)
    missing = set(arrivals) - once
    first_at: dict[str, float] = {}
    for _, m, _, at in shown:
        first_at.setdefault(m, at)
    delays = sorted(at - arrivals[m] for m, at in first_at.items())
    newest: dict[str, str] = {}
    out_of_order = 0
    for replica, m, _, _ in shown:
        out_of_order += m < newest.get(replica, "")
        newest[replica] = max(m, newest.get(replica, ""))
    minutes = max(stopped - T0, 1.0) / 60
    return {
        "lines": len(arrivals),
        "shown": len(once),
        "lost": sum(1 for m in missing if arrivals[m] <= last_look),
        "after_stop": sum(1 for m in missing if arrivals[m] > last_look),
        "arrived_after_end": sum(1 for t in arrivals.values() if t > job.ends),
        "duplicates": len(messages) - len(once),
        "out_of_order": out_of_order,
        "marked_late": sum(1 for _, _, late, _ in shown if late),
        "delay_p50_s": round(statistics.median(delays), 2) if delays else None,
        "delay_p95_s": round(delays[int(0.95 * (len(delays) - 1))], 2) if delays else None,
        "delay_max_s": round(delays[-1], 2) if delays else None,
        "list_calls": len(reads),
        "list_per_minute": round(len(reads) / minutes, 1),
        "peak_list_in_60s": max((sum(1 for t in reads if a <= t < a + 60) for a in reads), default=0),
        "followed_minutes": round(minutes, 1),
        "stopped_after_end_s": round(stopped - job.ends, 1),
        "last_arrival_after_end_s": round(max(arrivals.values()) - job.ends, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1-minute jobs at 1 and 8 replicas, 3 seeds: a smoke run")
    parser.add_argument("--minutes", type=float, help="running time of each job (default 5, 1 with --quick)")
    parser.add_argument("--replicas", help="comma-separated replica counts (default 1,8,60; 1,8 with --quick)")
    parser.add_argument("--repeats", type=int, default=_stats.MIN_REPEATS, help="seeds per case (default %(default)s)")
    parser.add_argument("--speed", type=float, help="virtual seconds per real second for the live tail (default 20)")
    parser.add_argument("--followers", help="comma-separated subset of: " + ", ".join(FOLLOWERS))
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    minutes = args.minutes or (1.0 if args.quick else 5.0)
    counts = [int(n) for n in (args.replicas or ("1,8" if args.quick else "1,8,60")).split(",")]
    speed = args.speed or (60.0 if args.quick else 20.0)
    followers = [f.strip() for f in args.followers.split(",")] if args.followers else list(FOLLOWERS)
    runs, wall = [], time.perf_counter()
    for n in counts:
        for seed in range(1, args.repeats + 1):
            for follower in followers:
                r = run(Job(n, minutes, seed), follower, speed)
                runs.append(r)
                print(
                    f"{n:>3} replicas seed {seed}  {follower:<26} lines {r['lines']:>6} lost {r['lost']:>5} "
                    f"after stop {r['after_stop']:>4} dup {r['duplicates']:>3}  delay p50 {r['delay_p50_s']} "
                    f"p95 {r['delay_p95_s']} max {r['delay_max_s']} s  {r['list_per_minute']:5.1f} list/min "
                    f"(peak {r['peak_list_in_60s']})  stopped {r['stopped_after_end_s']:+.0f} s after the end"
                    + (f"  logs afterwards: {r['logs_after_shows']}" if "logs_after_shows" in r else ""),
                    flush=True,
                )
    summary = _stats.summarize(runs, ("replicas", "follower"), FIGURES + ("lines", "logs_after_shows"), VERDICT_FIGURES)
    print(
        f"({minutes:g}-minute jobs, {args.repeats} seeds, tail at {speed:g}× real time; "
        f"{time.perf_counter() - wall:.0f} s wall)"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "minutes": minutes,
                    "repeats": args.repeats,
                    "speed": speed,
                    "lines_per_second": 1.0,
                    "suppressed": SUPPRESSED,
                    "runs": runs,
                    "summary": summary,
                },
                indent=2,
            )
            + "\n"
        )
    ours = [r for r in runs if r["follower"].startswith("cloudtrain")]
    complete = all(
        r["lost"] == 0 and r["duplicates"] == 0 and r.get("logs_after_shows", r["lines"]) == r["lines"] for r in ours
    )
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
