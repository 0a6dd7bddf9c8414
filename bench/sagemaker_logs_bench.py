"""Following a SageMaker job's CloudWatch logs: delay and API calls, cloudtrain vs the SageMaker SDK.

Both followers read the same scripted job from a moto server (``tests/fakes/aws.py``)
through real boto3 clients, on a virtual clock (each follower's ``sleep`` moves the job
on), so minutes of a job run in seconds and the figures are exact and repeatable:

* **cloudtrain**: ``SageMakerJob.logs(follow=True)`` with its default policy: CloudWatch
  Logs Live Tail for the live view (served by the streaming fake ``tests/fakes/live_tail.py``
  in front of moto: an update a second, new events only), ``GetLogEvents`` by stream as the
  ground truth (one stream every 10 s while the tail is healthy), status every 5 s, final
  read 2 s after the end. A thread plays the job on an *accelerated* clock (``--speed``
  virtual seconds per real second) shared by the fake, the job and the follower, since the
  tail runs on a thread of its own; its delays carry this machine's scheduling noise × speed.
* **cloudtrain polling (before)**: the same follower without Live Tail (``live_tail=False``),
  as it was before: 2 s rounds of every stream paced to 10 calls/s, on the virtual clock.
* **sm-core logs_for_job**: the SageMaker Python SDK's classic follower, imported from
  the installed sagemaker-core 2.27 (``sagemaker.core.helper.session_helper``):
  ``_logs_init`` builds the client, ``_flush_log_streams`` discovers streams with
  ``limit=min(instances, 50)`` and, while the answer has a ``nextToken``, repeats the same
  request without it; ``sagemaker.core.logs.multi_stream_iter`` reads each stream from a
  (timestamp, skip) position. Driven by ``_logs_for_job``'s loop: poll every 10 s,
  DescribeTrainingJob every 30 s, one more poll after the job ends.
* **sm-core TrainingJob.wait**: the v3 resource API, ``TrainingJob.wait(logs=True)``:
  poll every 5 s; the SDK's ``MultiLogStreamHandler`` prints nothing until every instance
  has a stream, then reads each stream in turn (no merge). Its logs client is a singleton
  built in the *default* region; this row gives it a client in the job's region, and
  **…wait, default region** leaves it as the SDK builds it (the job is in eu-west-1,
  ``AWS_DEFAULT_REGION`` is us-east-1).

The SDK's loops are re-implemented here only to put their sleeps on the virtual clock;
discovery, reading and positions are the SDK's own functions.

The job: instance *i* starts 0–20 s in (its stream appears then), prints a line a second,
and its log agent ships a batch every 5 s (docker's awslogs cadence) and at exit; the job
turns Completed 10 s after the last line. The delay is from a batch reaching CloudWatch
to the follower yielding its lines, in virtual seconds (moto answers in ~1–3 ms of real
time; CloudWatch in ~20–50 ms). A follower that makes 500 DescribeLogStreams calls
without ever sleeping is stopped and reported as looping.

Calls a minute are over the whole follow (``calls_per_minute``, every call, as in the
report's table) and, for CloudWatch Logs alone, while the job runs (``logs_calls_per_minute_running``:
up to the moment it is Completed, so without the final sweep of every stream).

    python -m bench.sagemaker_logs_bench [--quick] [--json PATH] [--speed 5]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import heapq
import io
import json
import math
import os
import random
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cloudtrain.backends.sagemaker.aws import AwsClients
from cloudtrain.backends.sagemaker.jobs import SageMakerJob
from tests.fakes import AcceleratedClock
from tests.fakes.aws import LOG_GROUP, ROLE_ARN, LogWriter, MotoAws, env_for, moto_server
from tests.fakes.live_tail import LiveTailFake

REGION = "eu-west-1"
SHIP_EVERY = 5.0  # seconds between an instance's log batches
LOOP_LIMIT = 500  # DescribeLogStreams calls without a sleep in between: "loops forever"


@dataclass(frozen=True)
class Scenario:
    instances: int
    running_s: float  # how long each instance prints
    seed: int = 7

    @property
    def job_name(self) -> str:
        return f"bench-{self.instances}"


@dataclass
class Result:
    follower: str
    instances: int
    written: int
    shown: int
    lost: int
    duplicated: int
    out_of_order: int
    delay_p50_s: float | None
    delay_p95_s: float | None
    delay_max_s: float | None
    first_line_s: float | None  # virtual time of the first yielded line
    ended_after_job_s: float | None  # how long after Completed the follower stopped
    calls: dict[str, int]
    calls_per_minute: float
    logs_calls_per_minute_running: float | None  # CloudWatch Logs calls a minute until the job is Completed
    wall_s: float
    note: str = ""
    detail: str = ""  # the Live Tail follower's own counts


class Looping(Exception):
    pass


class World:
    """The scripted job on moto; ``sleep`` is the followers' clock and runs what falls due."""

    def __init__(self, aws: MotoAws, sc: Scenario):
        self.aws, self.sc = aws, sc
        self.now = 0.0
        self.epoch_ms = int(time.time() * 1000) - 3_600_000  # virtual t=0, an hour ago
        self.shipped: dict[str, float] = {}  # message → when it reached CloudWatch
        self.completed_at: float | None = None
        self.counts: Counter = Counter()  # the follower's calls (Counting adds to it)
        self.counts_at_completion: Counter | None = None
        self.writer = LogWriter(aws.client("logs", REGION), sc.job_name)
        self.streams: dict[int, str] = {}
        self.events: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = 0
        self._script()
        self.describes_since_sleep = 0
        self.follow_ended: float | None = None  # when a live follower stopped (LiveWorld)
        self.tail_note = ""  # the Live Tail follower's own counts

    def _at(self, t: float, action: Callable[[], None]) -> None:
        heapq.heappush(self.events, (t, self._seq, action))
        self._seq += 1

    def _script(self) -> None:
        rng = random.Random(self.sc.seed)
        end = self.sc.running_s
        for i in range(1, self.sc.instances + 1):
            start = rng.uniform(0, 20)
            stamps = [start + n for n in range(int(math.ceil(end - start)))]
            ships = [start + SHIP_EVERY * k for k in range(1, int((end - start) // SHIP_EVERY) + 1)] + [end + 1]
            done = 0
            for ship in ships:
                batch = [(n, t) for n, t in enumerate(stamps) if done <= n and t < ship]
                if batch:
                    self._at(ship, functools.partial(self._ship, i, batch))
                    done = batch[-1][0] + 1
        self._at(end + 10, self._complete)

    def _ship(self, instance: int, batch: list[tuple[int, float]]) -> None:
        if instance not in self.streams:
            self.streams[instance] = self.writer.open(instance)
        messages = [f"algo-{instance} line {n}" for n, _ in batch]
        self.writer.client.put_log_events(
            logGroupName=LOG_GROUP,
            logStreamName=self.streams[instance],
            logEvents=[
                {"timestamp": self.epoch_ms + int(t * 1000), "message": m}
                for (_, t), m in zip(batch, messages, strict=True)
            ],
        )
        for m in messages:
            self.shipped[m] = self.now

    def _complete(self) -> None:
        self.aws.set_job(
            REGION,
            self.sc.job_name,
            "Completed",
            "Completed",
            training_seconds=int(self.now),
            billable_seconds=int(self.now),
        )
        self.completed_at = self.now
        self.counts_at_completion = Counter(self.counts)

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        target = self.now + seconds
        while self.events and self.events[0][0] <= target:
            t, _, action = heapq.heappop(self.events)
            self.now = max(self.now, t)
            action()
        self.now = target
        self.describes_since_sleep = 0


class LiveWorld(World):
    """The same job, played by a thread on an accelerated clock: the follower's live tail runs
    on a thread of its own, which a clock that moves only when the follower sleeps cannot serve."""

    def __init__(self, aws: MotoAws, sc: Scenario, speed: float):
        self.accel = AcceleratedClock(start=0.0, speed=speed)
        super().__init__(aws, sc)
        self.player = threading.Thread(target=self._play, daemon=True, name="bench-job")

    @property
    def now(self) -> float:
        return self.accel.time()

    @now.setter
    def now(self, _value: float) -> None:  # World.__init__ sets t=0: the accelerated clock starts there
        pass

    def _play(self) -> None:
        while self.events:
            t, _, action = heapq.heappop(self.events)
            self.accel.sleep(t - self.accel.time())
            action()

    def sleep(self, seconds: float) -> None:
        self.accel.sleep(seconds)
        self.describes_since_sleep = 0

    def wait(self, event: threading.Event, seconds: float) -> bool:
        self.describes_since_sleep = 0
        return self.accel.wait(event, seconds)


class Counting:
    """A boto3 client that counts its calls, and stops a follower that never sleeps."""

    def __init__(self, client: Any, counts: Counter, world: World):
        self._client, self._counts, self._world = client, counts, world

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr) or name.startswith("_") or name in ("exceptions", "meta"):
            return attr

        def call(**kwargs: Any) -> Any:
            self._counts[name] += 1
            if name == "describe_log_streams":
                self._world.describes_since_sleep += 1
                if self._world.describes_since_sleep > LOOP_LIMIT:
                    raise Looping()
            return attr(**kwargs)

        return call


def _create_job(aws: MotoAws, sc: Scenario) -> None:
    aws.client("sagemaker", REGION).create_training_job(
        TrainingJobName=sc.job_name,
        AlgorithmSpecification={"TrainingImage": "tf", "TrainingInputMode": "File"},
        RoleArn=ROLE_ARN,
        OutputDataConfig={"S3OutputPath": "s3://bench/out"},
        ResourceConfig={"InstanceType": "ml.g4dn.xlarge", "InstanceCount": sc.instances, "VolumeSizeInGB": 50},
        StoppingCondition={"MaxRuntimeInSeconds": 86400},
    )
    aws.set_job(REGION, sc.job_name, "InProgress", "Training")


def follow_cloudtrain(world: World, counts: Counter, seen: list[tuple[str, float]], *, live_tail: bool = True) -> None:
    """``SageMakerJob.logs(follow=True)``; with Live Tail on the accelerated clock through the
    streaming fake, without it (the follower before Live Tail) on the virtual clock."""
    if not live_tail:
        clients = AwsClients(REGION)
        clients.__dict__["logs"] = Counting(clients.logs, counts, world)
        clients.__dict__["sagemaker"] = Counting(clients.sagemaker, counts, world)
        job = SageMakerJob(
            world.sc.job_name, clients, sleep=world.sleep, clock=world.clock, tailer_options={"live_tail": False}
        )
        for line in job.logs(follow=True):
            seen.append((line.message, world.now))
        return
    assert isinstance(world, LiveWorld)
    with LiveTailFake(world.aws.endpoint, sleep=world.accel.sleep) as fake:
        os.environ["AWS_ENDPOINT_URL_CLOUDWATCH_LOGS"] = fake.endpoint
        try:
            clients = AwsClients(REGION)
            for name in ("logs", "logs_tail", "sagemaker"):
                clients.__dict__[name] = Counting(getattr(clients, name), counts, world)
        finally:
            del os.environ["AWS_ENDPOINT_URL_CLOUDWATCH_LOGS"]
        job = SageMakerJob(
            world.sc.job_name, clients, sleep=world.sleep, clock=world.clock, tailer_options={"wait": world.wait}
        )
        lines = job.logs(follow=True)
        world.player.start()
        for line in lines:
            seen.append((line.message, world.now))
        world.follow_ended = world.now  # before the fake's shutdown
        t = job.tailer
        assert t is not None  # logs(follow=True) made one
        world.tail_note = (
            f"Live Tail: {t.from_tail} of {t.shown} lines first shown by the tail, "
            f"{t.reconciles} reads of every stream, {t.verifies} single-stream checks"
        )
        world.player.join()


def follow_sagemaker_core(world: World, counts: Counter, seen: list[tuple[str, float]]) -> None:
    import botocore.config
    from sagemaker.core.helper.session_helper import _flush_log_streams

    session = AwsClients(REGION).session
    # As _logs_init builds it (max_attempts 15), but in the job's region, not the default one.
    logs = Counting(
        session.client("logs", region_name=REGION, config=botocore.config.Config(retries={"max_attempts": 15})),
        counts,
        world,
    )
    sm = Counting(session.client("sagemaker", region_name=REGION), counts, world)
    name, poll = world.sc.job_name, 10

    def color_wrap(_index: int, message: str) -> None:
        seen.append((message, world.now))

    world.sleep(5)  # _wait_until: sleep(poll=5), then DescribeTrainingJob
    description = sm.describe_training_job(TrainingJobName=name)
    instance_count = description["ResourceConfig"]["InstanceCount"]
    stream_names: list[str] = []  # _logs_init's list: _flush_log_streams rebinds its own copy
    positions: dict = {}
    state = "TAILING"
    last_describe = world.now
    while True:
        _flush_log_streams(stream_names, instance_count, logs, LOG_GROUP, name, positions, False, color_wrap)
        if state == "COMPLETE":
            break
        world.sleep(poll)
        if state == "JOB_COMPLETE":
            state = "COMPLETE"
        elif world.now - last_describe >= 30:
            description = sm.describe_training_job(TrainingJobName=name)
            last_describe = world.now
            if description["TrainingJobStatus"] in ("Completed", "Failed", "Stopped"):
                state = "JOB_COMPLETE"


def follow_training_job_wait(
    world: World, counts: Counter, seen: list[tuple[str, float]], *, job_region: bool = True
) -> None:
    """``sagemaker.core.resources.TrainingJob.wait(logs=True)``'s loop (poll 5 s) around the SDK's
    own ``MultiLogStreamHandler``; its logs client is a singleton built in the default region,
    replaced here by one in the job's region unless ``job_region`` is False."""
    from sagemaker.core.utils.logs import CloudWatchLogsClient, MultiLogStreamHandler

    global _SDK_BUILT_CLIENT
    singleton = CloudWatchLogsClient()
    if _SDK_BUILT_CLIENT is None:
        _SDK_BUILT_CLIENT = singleton.client  # as the SDK builds it: Session().region_name
    if job_region:
        base = AwsClients(REGION).session.client("logs", region_name=REGION)
    else:
        base = _SDK_BUILT_CLIENT
    singleton.client = Counting(base, counts, world)
    sm = Counting(AwsClients(REGION).sagemaker, counts, world)
    name = world.sc.job_name
    instance_count = sm.describe_training_job(TrainingJobName=name)["ResourceConfig"]["InstanceCount"]
    handler = MultiLogStreamHandler("/aws/sagemaker/TrainingJobs", name, instance_count)
    while True:
        status = sm.describe_training_job(TrainingJobName=name)["TrainingJobStatus"]  # self.refresh()
        if handler.ready():
            for _stream, event in handler.get_latest_log_events():
                seen.append((event["message"], world.now))
        if status in ("Completed", "Failed", "Stopped"):
            return
        world.sleep(5)


_SDK_BUILT_CLIENT: Any = None

FOLLOWERS: dict[str, Callable[..., None]] = {
    "cloudtrain": follow_cloudtrain,
    "cloudtrain polling (before)": lambda w, c, s: follow_cloudtrain(w, c, s, live_tail=False),
    "sm-core logs_for_job": follow_sagemaker_core,
    "sm-core TrainingJob.wait": follow_training_job_wait,
    "…wait, default region": lambda w, c, s: follow_training_job_wait(w, c, s, job_region=False),
}


def run(aws: MotoAws, sc: Scenario, follower: str, speed: float = 5.0) -> Result:
    aws.reset()
    _create_job(aws, sc)
    world = LiveWorld(aws, sc, speed) if follower == "cloudtrain" else World(aws, sc)
    counts = world.counts
    seen: list[tuple[str, float]] = []
    note = ""
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the SDK prints "." while it finds no stream
            FOLLOWERS[follower](world, counts, seen)
    except Looping:
        note = f"never returned: {LOOP_LIMIT} DescribeLogStreams calls without a sleep (same request, no nextToken)"
    wall = time.perf_counter() - start

    shown = Counter(m for m, _ in seen)
    delays = [t - world.shipped[m] for m, t in seen if m in world.shipped]
    order: dict[str, int] = {}
    out_of_order = 0
    for message, _ in seen:
        replica, _, n = message.partition(" line ")
        if int(n) < order.get(replica, -1):
            out_of_order += 1
        order[replica] = max(order.get(replica, -1), int(n))
    written = len(world.shipped)
    total_calls = sum(counts.values())
    minutes = (world.now / 60) if not note else (wall / 60)
    q = statistics.quantiles(delays, n=20) if len(delays) >= 2 else None
    running = world.counts_at_completion
    logs_running = (
        round(sum(v for k, v in running.items() if k != "describe_training_job") / (world.completed_at / 60), 1)
        if running is not None and world.completed_at and not note
        else None
    )
    return Result(
        follower=follower,
        instances=sc.instances,
        written=written,
        shown=len(shown),
        lost=written - len(set(shown) & set(world.shipped)),
        duplicated=sum(c - 1 for c in shown.values()),
        out_of_order=out_of_order,
        delay_p50_s=round(statistics.median(delays), 2) if delays else None,
        delay_p95_s=round(q[18], 2) if q else None,
        delay_max_s=round(max(delays), 2) if delays else None,
        first_line_s=round(seen[0][1], 2) if seen else None,
        ended_after_job_s=(
            round((world.now if world.follow_ended is None else world.follow_ended) - world.completed_at, 1)
            if world.completed_at is not None and not note
            else None
        ),
        calls=dict(sorted(counts.items())),
        calls_per_minute=round(total_calls / minutes, 1) if minutes else 0.0,
        logs_calls_per_minute_running=logs_running,
        wall_s=round(wall, 2),
        note=note,
        detail=world.tail_note,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 s jobs: a CI smoke test")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--speed",
        type=float,
        default=5.0,
        help="virtual seconds per real second for the Live Tail follower (default 5)",
    )
    parser.add_argument("--only", help="comma-separated followers to run (default: all)")
    args = parser.parse_args(argv)
    running = 30.0 if args.quick else 300.0
    scenarios = [Scenario(n, running) for n in (1, 8, 60)]

    followers = [f.strip() for f in args.only.split(",")] if args.only else list(FOLLOWERS)
    unknown = [f for f in followers if f not in FOLLOWERS]
    if unknown:
        parser.error(f"--only: unknown follower {', '.join(unknown)}; known: {', '.join(FOLLOWERS)}")
    results: list[Result] = []
    with moto_server() as aws:
        os.environ.update(env_for(aws.endpoint, default_region="us-east-1"))
        for sc in scenarios:
            for follower in followers:
                results.append(run(aws, sc, follower, args.speed))
                _print(results[-1])
    _print_before_after(results)
    if args.json:
        payload = {
            "running_s": running,
            "speed": args.speed,
            "taken": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "results": [asdict(r) for r in results],
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    bad = [r for r in results if r.follower.startswith("cloudtrain") and (r.lost or r.duplicated or r.out_of_order)]
    return 1 if bad else 0


def _print(r: Result) -> None:
    def s(v: float | None) -> str:
        return "   -" if v is None else f"{v:5.1f}"

    calls = ", ".join(f"{k} {v}" for k, v in r.calls.items())
    print(
        f"{r.instances:>3} inst  {r.follower:<26} shown {r.shown:>6}/{r.written:<6} "
        f"lost {r.lost:>5} dup {r.duplicated:>3} "
        f"ooo {r.out_of_order:>3}  delay p50 {s(r.delay_p50_s)} p95 {s(r.delay_p95_s)} max {s(r.delay_max_s)} s  "
        f"end+{s(r.ended_after_job_s)} s  {r.calls_per_minute:>8.1f} calls/min  ({calls})  wall {r.wall_s:.1f} s"
        + (f"\n      {r.note}" if r.note else "")
        + (f"\n      {r.detail}" if r.detail else ""),
        flush=True,
    )


def _print_before_after(results: list[Result]) -> None:
    """CloudWatch Logs calls a minute while the job runs: the polling follower, then Live Tail."""
    by = {(r.follower, r.instances): r for r in results}
    for n in sorted({r.instances for r in results}):
        before, after = by.get(("cloudtrain polling (before)", n)), by.get(("cloudtrain", n))
        if before and after:
            print(
                f"{n:>3} inst  CloudWatch Logs calls/min while running: {before.logs_calls_per_minute_running} "
                f"(polling) → {after.logs_calls_per_minute_running} (Live Tail)",
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())
