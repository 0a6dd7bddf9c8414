"""Following a Vertex AI job's logs, a busy and an idle job: delay and read cost, cloudtrain vs gcloud.

Both followers read the same scripted job from the in-repo Cloud Logging gRPC fake
(``tests/fakes/cloud_logging.py``) through the real ``logging_v2`` client, on a virtual
clock, so an hour of job runs in seconds and every figure is exact and repeatable:

* **cloudtrain, polling alone**: ``cloudtrain.backends.vertex.logs.LogTailer`` with its
  default policy where the server has no TailLogEntries (its ``entries.list`` fallback; the
  live tail needs a thread and real time: ``bench/vertex_late_bench.py`` measures it).
* **gcloud ml-engine**: ``gcloud ml-engine jobs stream-logs`` as gcloud 578.0.0's source
  behaves (``bench/_vertex_baselines.py``, which cites the files and lines): every 60 s one
  page (1000 entries) after its position and older than now − 5 s, the job checked every
  10 s; it stops once the job has ended and two polls in a row showed nothing. Anything that
  becomes readable after the position has passed its timestamp is never shown.

The job: PENDING 30 s, RUNNING for the duration, 15 s of teardown, SUCCEEDED. Each
replica's logging agent ships a batch every 5 s that becomes readable 2 s later; a
few batches (``straggle``) are held back 10–40 s more, as happens when an agent retries.

Figures per scenario, follower and seed (the seed draws which batches are held back):
lines shown / lost / duplicated / out of order within a replica, the delay from an entry
becoming readable to being yielded (median, p95, max), list requests per minute while
following, and the most requests in any 60 s window; across seeds, median and min–max, and
a verdict per figure against cloudtrain (``bench/_stats.py``: "no measurable difference"
when the min–max ranges overlap).

    python -m bench.vertex_logs_bench [--quick] [--repeats N] [--json PATH]
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
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _stats
from bench._vertex_baselines import follow_gcloud as gcloud_ml_engine
from cloudtrain.backends.base import JobState, JobStatus
from cloudtrain.backends.vertex import settings
from cloudtrain.backends.vertex.cloud_logging import CloudLoggingReader
from cloudtrain.backends.vertex.logs import LogTailer
from tests.fakes import VirtualClock
from tests.fakes.cloud_logging import FakeLogging

JOB = "1000"
T0 = 1_700_000_000.0
PENDING, TEARDOWN = 30.0, 15.0


@dataclass(frozen=True)
class Scenario:
    name: str
    replicas: int
    lines_per_second: float  # per replica
    minutes: float  # running time
    straggle: float = 0.05  # share of batches held back 10–40 s more
    flush_every: float = 5.0
    delay: float = 2.0


@dataclass
class Result:
    scenario: str
    follower: str
    seed: int
    lines: int
    shown: int
    lost: int
    duplicates: int
    out_of_order: int
    delay_median_s: float
    delay_p95_s: float
    delay_max_s: float
    requests: int
    requests_per_minute: float
    peak_requests_in_60s: int
    followed_minutes: float


def script(fake: FakeLogging, sc: Scenario, seed: int = 7) -> list[tuple[str, str]]:
    """Write the scenario's lines into ``fake``; returns (replica, message) in written order."""
    rng = random.Random(seed)
    written = []
    start, end = T0 + PENDING + 1, T0 + PENDING + sc.minutes * 60
    for r in range(sc.replicas):
        replica = "workerpool0-0" if r == 0 else f"workerpool1-{r - 1}"
        held: dict[int, float] = {}
        n, t = 0, start + r * 0.37
        while t < end:
            batch = math.ceil(t / sc.flush_every)
            if batch not in held:
                held[batch] = rng.uniform(10, 40) if rng.random() < sc.straggle else 0.0
            message = f"{replica} line {n:06d}"
            fake.add(JOB, replica, message, at=t, readable=batch * sc.flush_every + sc.delay + held[batch])
            written.append((replica, message))
            n, t = n + 1, start + r * 0.37 + (n + 1) / sc.lines_per_second
    return written


def job_status(clock: VirtualClock, sc: Scenario):
    ends = T0 + PENDING + sc.minutes * 60 + TEARDOWN

    def status() -> JobStatus:
        now = clock.time()
        state = JobState.PENDING if now < T0 + PENDING else JobState.RUNNING if now < ends else JobState.SUCCEEDED
        ended = dt.datetime.fromtimestamp(ends, dt.timezone.utc) if state.terminal else None
        return JobStatus(JOB, JOB, state, state.name, ended=ended)

    return status


def follow_cloudtrain(reader, clock, sc):
    tailer = LogTailer(
        reader,
        JOB,
        start=dt.datetime.fromtimestamp(T0, dt.timezone.utc),
        job_status=job_status(clock, sc),
        clock=clock.time,
        sleep=clock.sleep,
    )
    for line in tailer.follow():
        yield line.replica, line.message, clock.time()


def follow_gcloud(reader, clock, sc):
    start = dt.datetime.fromtimestamp(T0, dt.timezone.utc)
    for replica, message, _, at in gcloud_ml_engine(
        reader, JOB, start=start, job_status=job_status(clock, sc), clock=clock.time, sleep=clock.sleep
    ):
        yield replica, message, at


def run(sc: Scenario, follower: str, seed: int = 7) -> Result:
    clock = VirtualClock(T0)
    fake = FakeLogging(clock)
    try:
        written = script(fake, sc, seed)
        endpoint = settings.Endpoint(fake.address)
        reader = CloudLoggingReader.connect("bench", endpoint, settings.anonymous())
        began = clock.time()
        follow = follow_cloudtrain if follower.startswith("cloudtrain") else follow_gcloud
        shown = list(follow(reader, clock, sc))
        minutes = (clock.time() - began) / 60
        reads = [r.at for r in fake.reads]
        delays = sorted(at - fake.readable[m] for _, m, at in shown)
        messages = [m for _, m, _ in shown]
        last: dict[str, str] = {}
        inversions = 0
        for replica, message, _ in shown:
            inversions += message < last.get(replica, "")
            last[replica] = max(message, last.get(replica, ""))
        return Result(
            scenario=sc.name,
            follower=follower,
            seed=seed,
            lines=len(written),
            shown=len(set(messages)),
            lost=len({m for _, m in written} - set(messages)),
            duplicates=len(messages) - len(set(messages)),
            out_of_order=inversions,
            delay_median_s=round(statistics.median(delays), 2) if delays else float("nan"),
            delay_p95_s=round(delays[int(0.95 * (len(delays) - 1))], 2) if delays else float("nan"),
            delay_max_s=round(delays[-1], 2) if delays else float("nan"),
            requests=len(reads),
            requests_per_minute=round(len(reads) / minutes, 1),
            peak_requests_in_60s=max(sum(1 for t in reads if a <= t < a + 60) for a in reads),
            followed_minutes=round(minutes, 1),
        )
    finally:
        fake.stop()


FOLLOWERS = ("cloudtrain, polling alone", "gcloud ml-engine")
FIGURES = (
    "lines",
    "lost",
    "duplicates",
    "out_of_order",
    "delay_median_s",
    "delay_p95_s",
    "delay_max_s",
    "requests_per_minute",
    "peak_requests_in_60s",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short jobs: a CI smoke test")
    parser.add_argument("--repeats", type=int, default=_stats.MIN_REPEATS, help="seeds per case (default %(default)s)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    minutes = 3 if args.quick else 20
    scenarios = [
        Scenario("busy", replicas=2, lines_per_second=5, minutes=minutes),
        Scenario("idle", replicas=2, lines_per_second=1 / 60, minutes=minutes),
    ]
    results = []
    wall = time.perf_counter()
    for sc in scenarios:
        for seed in range(1, args.repeats + 1):
            for follower in FOLLOWERS:
                results.append(run(sc, follower, seed))
    wall = time.perf_counter() - wall

    cols = [
        "scenario",
        "follower",
        "seed",
        "lines",
        "lost",
        "duplicates",
        "out_of_order",
        "delay_median_s",
        "delay_p95_s",
        "delay_max_s",
        "requests_per_minute",
        "peak_requests_in_60s",
    ]
    rows = [[str(getattr(r, c)) for c in cols] for r in results]
    widths = [max(len(c), *(len(row[i]) for row in rows)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)))
    for row in rows:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))
    print(f"({minutes}-minute jobs, {args.repeats} seeds, virtual clock; {wall:.1f} s wall)")
    runs = [asdict(r) for r in results]
    summary = _stats.summarize(runs, ("scenario", "follower"), FIGURES, FIGURES[1:], ours=FOLLOWERS[0])
    if args.json:
        args.json.write_text(
            json.dumps({"minutes": minutes, "repeats": args.repeats, "results": runs, "summary": summary}, indent=2)
            + "\n"
        )
    ours = [r for r in results if r.follower.startswith("cloudtrain")]
    return 0 if all(r.lost == 0 and r.duplicates == 0 and r.peak_requests_in_60s <= 55 for r in ours) else 1


if __name__ == "__main__":
    sys.exit(main())
