"""The log followers under a flaky network: lines lost, duplicated, and how soon lines flow again.

Each cloud's follower runs through its public entry point, a job handle's
``logs(follow=True)``, **in real time** (gRPC's own reconnect backoff is real time, so a
virtual clock would misstate it), against CloudWatch Logs (moto, with the streaming
``StartLiveTail`` fake of ``tests/fakes/live_tail.py`` in front for SageMaker's live view) and
the Cloud Logging gRPC fake. Both are reached through a fault proxy (``tests/fakes/fault_proxy.py``) set in the
endpoint settings a user has: ``AWS_ENDPOINT_URL_CLOUDWATCH_LOGS`` and
``CLOUDTRAIN_LOGGING_ENDPOINT``. The job runs on (its state comes from the job services,
which stay reachable) while the schedule plays:

* **503 bursts** — three 5 s bursts, 5 s apart: HTTP 503 ``ServiceUnavailableException``
  from the proxy (SageMaker); gRPC ``UNAVAILABLE`` from the fake (Vertex);
* **throttling 20 s** — HTTP 400 ``ThrottlingException`` from the proxy (SageMaker);
  gRPC ``RESOURCE_EXHAUSTED`` from the fake (Vertex);
* **outage 5 / 15 / 30 / 60 s** — the proxy closes its listener (connections refused) and
  resets the open ones, then listens again on the same port.

A job has 2 replicas writing a line every 0.5 s from the start until the job ends, 8 s after
the last fault; CloudWatch gets each second's lines at once, Cloud Logging a batch every 2 s
readable 1 s later. ``--repeats`` jobs per cloud follow the same schedule at the same time
(both clouds too). Per cloud and schedule: lines written, lost (goal 0), printed twice (goal
0), and, for each fault window, the time from the endpoint's return (the window's end) to the
first line the follower yields after it: median and min–max over windows and repeats.

    python -m bench.log_faults_bench [--quick] [--repeats 3] [--only outage-15s,...] [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._stats import spread
from tests.fakes import fault_proxy as fp

LINE_EVERY = 0.5  # seconds between a replica's lines
REPLICAS = 2


@dataclass(frozen=True)
class Schedule:
    name: str
    what: str  # how each cloud's client sees it
    kind: str  # "unavailable" | "throttled" | "refused"
    windows: tuple[tuple[float, float], ...]  # (start, end) seconds after ``lead``
    lead: float = 6.0  # seconds of clean following before the first fault …
    tail: float = 8.0  # … and of the job after the last

    @property
    def length(self) -> float:
        return max(end for _, end in self.windows)


def schedules(quick: bool) -> list[Schedule]:
    if quick:
        return [
            Schedule("503-bursts", "2 × 1 s of 503 / UNAVAILABLE", "unavailable", ((0, 1), (2, 3)), 3, 3),
            Schedule("throttling", "2 s of throttling", "throttled", ((0, 2),), 3, 3),
            Schedule("outage-2s", "connections refused for 2 s", "refused", ((0, 2),), 3, 3),
        ]
    return [
        Schedule("503-bursts", "3 × 5 s of 503 / UNAVAILABLE, 5 s apart", "unavailable", ((0, 5), (10, 15), (20, 25))),
        Schedule(
            "throttling-20s",
            "20 s of throttling (400 ThrottlingException / RESOURCE_EXHAUSTED)",
            "throttled",
            ((0, 20),),
        ),
        *[Schedule(f"outage-{s}s", f"connections refused for {s} s", "refused", ((0, s),)) for s in (5, 15, 30, 60)],
    ]


@dataclass
class Followed:
    """One follower's run: what was written, what it yielded and when."""

    written: list[str]
    shown: list[tuple[float, str]]  # (time.time() when yielded, message)
    error: str = ""

    def recoveries(self, ends: list[float]) -> list[float]:
        out = []
        for end in ends:
            after = [t for t, _ in self.shown if t >= end]
            if after:
                out.append(min(after) - end)
        return out


def _follow(job, out: Followed, drain: float | None = None) -> None:
    try:
        lines = job.logs(follow=True, drain=drain) if drain is not None else job.logs(follow=True)
        for line in lines:
            out.shown.append((time.time(), line.message))
    except Exception as exc:
        out.error = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]


# -- SageMaker: moto behind the HTTP proxy -----------------------------------------------------


def run_sagemaker(moto, sc: Schedule, repeats: int, t0: float, tag: str) -> list[Followed]:
    from cloudtrain.backends.sagemaker import SageMakerBackend
    from cloudtrain.backends.sagemaker.aws import AwsClients
    from tests.fakes.aws import ROLE_ARN, LogWriter
    from tests.fakes.live_tail import LiveTailFake

    region = "us-east-1"
    live = LiveTailFake(moto.endpoint)  # StartLiveTail streamed as the service does; the rest passed to moto
    live.quiet_errors = True
    proxy = fp.FaultProxy(live.endpoint.removeprefix("http://"), http=True, clock=time.time)
    shape = {"unavailable": fp.UNAVAILABLE, "throttled": fp.THROTTLED}.get(sc.kind)
    windows = [(t0 + sc.lead + a, t0 + sc.lead + b) for a, b in sc.windows]
    proxy.schedule(*[fp.answer(a, b, **shape) if shape else fp.refuse(a, b) for a, b in windows])
    ends_at = t0 + sc.lead + sc.length + sc.tail
    sm = moto.client("sagemaker", region)
    runs: list[Followed] = []
    threads = []
    with live, proxy:
        os.environ["AWS_ENDPOINT_URL_CLOUDWATCH_LOGS"] = proxy.url  # what a user would set
        for r in range(repeats):
            name = f"faults-{tag}-{sc.name}-{r}"
            sm.create_training_job(
                TrainingJobName=name,
                RoleArn=ROLE_ARN,
                OutputDataConfig={"S3OutputPath": "s3://b/out"},
                AlgorithmSpecification={"TrainingImage": "tf:latest", "TrainingInputMode": "File"},
                ResourceConfig={"InstanceType": "ml.g4dn.xlarge", "InstanceCount": REPLICAS, "VolumeSizeInGB": 50},
                StoppingCondition={"MaxRuntimeInSeconds": 3600},
            )
            moto.set_job(region, name, "InProgress", "Training")
            writer = LogWriter(moto.client("logs", region), name)
            streams = [writer.open(i) for i in range(1, REPLICAS + 1)]
            out = Followed([], [])
            runs.append(out)
            clients = AwsClients(region)
            for client in ("logs", "logs_tail"):  # built now, on the proxy's endpoint (not on the follower's thread)
                getattr(clients, client, None)

            def these_clients(_region: str, c: AwsClients = clients) -> AwsClients:
                return c

            job = SageMakerBackend(clients=these_clients, clock=time.time).attach(name, region=region)
            threads.append(threading.Thread(target=_write_sagemaker, args=(moto, writer, streams, name, out, ends_at)))
            threads.append(threading.Thread(target=_follow, args=(job, out)))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return runs


def _write_sagemaker(moto, writer, streams: list[str], name: str, out: Followed, ends_at: float) -> None:
    n = itertools.count()
    while time.time() < ends_at:
        k = next(n)
        for i, stream in enumerate(streams, start=1):
            batch = [f"algo-{i} line {2 * k + j:05d}" for j in range(int(1 / LINE_EVERY))]
            writer.write(stream, batch)
            out.written += batch
        time.sleep(1.0)
    moto.set_job("us-east-1", name, "Completed", "Completed")


# -- Vertex: the Cloud Logging fake behind the TCP proxy -----------------------------------------


class _RealClock:
    """What the fakes read the time from: the real one."""

    def time(self) -> float:
        return time.time()


def run_vertex(sc: Schedule, repeats: int, t0: float) -> list[Followed]:
    from cloudtrain.backends.vertex import VertexBackend
    from cloudtrain.backends.vertex.logs import TailPolicy
    from tests.fakes.cloud_logging import FakeLogging, write_lines
    from tests.fakes.vertex_jobs import FakeJobService, Script

    clock = _RealClock()
    jobs, logging_fake = FakeJobService(clock), FakeLogging(clock)
    windows = [(t0 + sc.lead + a, t0 + sc.lead + b) for a, b in sc.windows]
    if sc.kind == "unavailable":
        logging_fake.outages = windows
    elif sc.kind == "throttled":
        logging_fake.throttled = windows
    proxy = fp.FaultProxy(logging_fake.address, http=False, clock=time.time)
    if sc.kind == "refused":
        proxy.schedule(*[fp.refuse(a, b) for a, b in windows])
    ends_at = t0 + sc.lead + sc.length + sc.tail
    env = {"CLOUDTRAIN_VERTEX_ENDPOINT": jobs.address, "CLOUDTRAIN_LOGGING_ENDPOINT": proxy.address}
    runs, threads = [], []
    try:
        with proxy:
            for _ in range(repeats):
                job_id = jobs.start(Script(timeline=[(0, "RUNNING"), (ends_at - time.time(), "SUCCEEDED")]))
                written = []
                for r in range(REPLICAS):
                    written += write_lines(
                        logging_fake,
                        job_id,
                        f"workerpool0-{r}",
                        start=t0,
                        end=ends_at - 0.5,
                        every=LINE_EVERY,
                        flush_every=2.0,
                        delay=1.0,
                        seed=r,
                    )
                out = Followed(written, [])
                runs.append(out)
                job = VertexBackend(env=env, policy=TailPolicy(), echo=lambda line: None).attach(
                    job_id, region="us-central1", project="p"
                )
                threads.append(threading.Thread(target=_follow, args=(job, out, 5.0)))  # 5 s quiet after the end
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        jobs.stop()
        logging_fake.stop()
    return runs


# -- the run ------------------------------------------------------------------------------------


def summarize(cloud: str, sc: Schedule, runs: list[Followed], t0: float) -> dict:
    ends = [t0 + sc.lead + end for _, end in sc.windows]
    written = sum(len(r.written) for r in runs)
    lost = sum(len(set(r.written) - {m for _, m in r.shown}) for r in runs)
    duplicates = sum(len(r.shown) - len({m for _, m in r.shown}) for r in runs)
    recoveries = [round(x, 2) for r in runs for x in r.recoveries(ends)]
    return {
        "cloud": cloud,
        "schedule": sc.name,
        "what": sc.what,
        "kind": sc.kind,
        "repeats": len(runs),
        "written": written,
        "lost": lost,
        "duplicates": duplicates,
        "recovery_s": spread(recoveries) if recoveries else None,
        "windows": len(ends) * len(runs),
        "errors": sorted({r.error for r in runs if r.error}),
    }


def run_schedule(moto, sc: Schedule, repeats: int, tag: str) -> list[dict]:
    t0 = time.time() + 2.0  # set-up of both clouds' jobs (modules imported already) fits in two seconds
    results: dict[str, list[Followed]] = {}

    def go(cloud: str, fn: Callable[[], list[Followed]]) -> None:
        try:
            results[cloud] = fn()
        except Exception as exc:
            results[cloud] = [Followed([], [], f"{type(exc).__name__}: {exc}".splitlines()[0][:200])]

    threads = [
        threading.Thread(target=go, args=("sagemaker", lambda: run_sagemaker(moto, sc, repeats, t0, tag))),
        threading.Thread(target=go, args=("vertex", lambda: run_vertex(sc, repeats, t0))),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [summarize(cloud, sc, results[cloud], t0) for cloud in ("sagemaker", "vertex")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short faults, one repeat (the smoke run)")
    parser.add_argument("--repeats", type=int, help="jobs per cloud and schedule (default 3; 1 with --quick)")
    parser.add_argument("--only", help="comma-separated schedule names")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)
    chosen = schedules(args.quick)
    if args.only:
        wanted = {n.strip() for n in args.only.split(",")}
        chosen = [s for s in chosen if s.name in wanted]
    import cloudtrain.backends.sagemaker
    import cloudtrain.backends.vertex  # noqa: F401
    import tests.fakes.cloud_logging
    import tests.fakes.live_tail
    import tests.fakes.vertex_jobs  # noqa: F401
    from tests.fakes.aws import env_for, moto_server

    logging.getLogger("cloudtrain").setLevel(logging.ERROR)  # the followers' "lost the connection" lines
    rows = []
    saved = dict(os.environ)
    started = time.time()
    try:
        with moto_server() as moto:
            os.environ.update(env_for(moto.endpoint))
            tag = format(int(started) % 100000, "05d")
            for sc in chosen:
                for row in run_schedule(moto, sc, repeats, tag):
                    rows.append(row)
                    rec = row["recovery_s"]
                    print(
                        json.dumps(
                            {k: row[k] for k in ("cloud", "schedule", "written", "lost", "duplicates")}
                            | {"recovery_median_s": rec and rec["median"], "errors": row["errors"]}
                        ),
                        flush=True,
                    )
    finally:
        os.environ.clear()
        os.environ.update(saved)
    data = {
        "repeats": repeats,
        "quick": args.quick,
        "line_every_s": LINE_EVERY,
        "replicas": REPLICAS,
        "seconds": round(time.time() - started, 1),
        "rows": rows,
    }
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    ok = all(r["lost"] == 0 and r["duplicates"] == 0 and not r["errors"] and r["written"] for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
