"""Following a Vertex AI job's logs: delay and read cost, cloudtrain vs gcloud's legacy poller.

Both followers read the same scripted job from the in-repo Cloud Logging gRPC fake
(``tests/fakes/cloud_logging.py``) through the real ``logging_v2`` client, on a virtual
clock, so an hour of job runs in seconds and every figure is exact and repeatable:

* **cloudtrain**: ``cloudtrain.backends.vertex.logs.LogTailer`` with its default policy.
* **gcloud 60 s**: the legacy ``--stream-logs`` loop re-implemented from its documented
  behaviour: every 60 s one page (1000 entries) strictly after the last (timestamp,
  insertId) seen and older than now − 5 s; anything that becomes readable after the
  position has passed its timestamp is never shown. It stops at the first poll after
  the job has ended.

The job: PENDING 30 s, RUNNING for the duration, 15 s of teardown, SUCCEEDED. Each
replica's logging agent ships a batch every 5 s that becomes readable 2 s later; a
few batches (``straggle``) are held back 10–40 s more, as happens when an agent retries.

Figures per scenario and follower: lines shown / lost / duplicated / out of order within
a replica, the delay from an entry becoming readable to being yielded (median, p95, max),
list requests per minute while following, and the most requests in any 60 s window.

    uv run --frozen python bench/vertex_logs_bench.py [--quick] [--json PATH]
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

from cloudtrain.backends.base import JobState, JobStatus  # noqa: E402
from cloudtrain.backends.vertex import settings  # noqa: E402
from cloudtrain.backends.vertex.cloud_logging import CloudLoggingReader, job_filter, stamp  # noqa: E402
from cloudtrain.backends.vertex.logs import LogTailer  # noqa: E402
from tests.fakes import VirtualClock  # noqa: E402
from tests.fakes.cloud_logging import FakeLogging  # noqa: E402

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
        reader, JOB, start=dt.datetime.fromtimestamp(T0, dt.timezone.utc), job_status=job_status(clock, sc),
        clock=clock.time, sleep=clock.sleep,
    )
    for line in tailer.follow():
        yield line.replica, line.message, clock.time()


def follow_gcloud(reader, clock, sc, interval: float = 60.0, cutoff: float = 5.0):
    status = job_status(clock, sc)
    position: tuple[dt.datetime, str] = (dt.datetime.fromtimestamp(T0, dt.timezone.utc), "")
    while True:
        upper = dt.datetime.fromtimestamp(clock.time() - cutoff, dt.timezone.utc)
        query = f'{job_filter(JOB)} AND timestamp>="{stamp(position[0])}" AND timestamp<"{stamp(upper)}"'
        entries, _ = reader(query, None, 1000)  # one page per poll
        for e in entries:
            if (e.timestamp, e.insert_id) > position:
                position = (e.timestamp, e.insert_id)
                yield e.replica, e.message, clock.time()
        if status().state.terminal:
            return
        clock.sleep(interval)


def run(sc: Scenario, follower: str) -> Result:
    clock = VirtualClock(T0)
    fake = FakeLogging(clock)
    try:
        written = script(fake, sc)
        endpoint = settings.Endpoint(fake.address)
        reader = CloudLoggingReader.connect("bench", endpoint, settings.anonymous())
        began = clock.time()
        follow = follow_cloudtrain if follower == "cloudtrain" else follow_gcloud
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short jobs: a CI smoke test")
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
        for follower in ("cloudtrain", "gcloud-60s"):
            results.append(run(sc, follower))
    wall = time.perf_counter() - wall

    cols = ["scenario", "follower", "lines", "lost", "duplicates", "out_of_order", "delay_median_s", "delay_p95_s",
            "delay_max_s", "requests_per_minute", "peak_requests_in_60s"]
    rows = [[str(getattr(r, c)) for c in cols] for r in results]
    widths = [max(len(c), *(len(row[i]) for row in rows)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for row in rows:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))
    print(f"({minutes}-minute jobs, virtual clock; {wall:.1f} s wall)")
    if args.json:
        args.json.write_text(json.dumps({"minutes": minutes, "results": [asdict(r) for r in results]}, indent=2) + "\n")
    ours = [r for r in results if r.follower == "cloudtrain"]
    return 0 if all(r.lost == 0 and r.duplicates == 0 and r.peak_requests_in_60s <= 55 for r in ours) else 1


if __name__ == "__main__":
    sys.exit(main())
