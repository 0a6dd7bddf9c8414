"""The Vertex follower end to end with its live tail: TailLogEntries and entries.list on the fakes.

A streaming read runs on its own thread, so these tests use an accelerated real clock
(tests.fakes.AcceleratedClock): a 15-minute job streams in seconds, the fakes and the
follower share that clock, and every assertion is about what was printed, never how fast.
"""

from __future__ import annotations

import math
import random
import re
from collections import defaultdict

import pytest

import cloudtrain.backends.vertex as vertex_module
from cloudtrain.backends.vertex import VertexBackend
from cloudtrain.backends.vertex.logs import TailPolicy
from cloudtrain.backends.vertex.retry import api_backoff
from cloudtrain.cli import main
from tests.fakes import AcceleratedClock
from tests.fakes.cloud_logging import FakeLogging, write_lines
from tests.fakes.fault_proxy import FaultProxy, refuse
from tests.fakes.vertex_jobs import FakeJobService, Script

pytestmark = [pytest.mark.server, pytest.mark.slow]

JOB = "1000"
FLUSH, EVERY = 5.0, 5.5  # the agent ships every 5 s; a replica writes a line every 5.5 s
_LINE = re.compile(r"^(?P<replica>\S+)\s+\| (?P<late>\(late, \d\d:\d\d:\d\d UTC\) )?(?P<message>\S+ line (?P<n>\d+))$")


@pytest.fixture
def world(monkeypatch):
    clock = AcceleratedClock(speed=100)
    jobs, logging = FakeJobService(clock), FakeLogging(clock)
    monkeypatch.setenv("CLOUDTRAIN_VERTEX_ENDPOINT", jobs.address)
    monkeypatch.setenv("CLOUDTRAIN_LOGGING_ENDPOINT", logging.address)
    backend = VertexBackend(
        clock=clock.time,
        sleep=clock.sleep,
        wait=clock.wait,
        policy=TailPolicy(),
        backoff=api_backoff(sleep=clock.sleep),
        echo=lambda line: None,
    )
    monkeypatch.setattr(vertex_module, "BACKEND", backend)
    yield clock, jobs, logging
    jobs.stop()
    logging.stop()


def _lateness(rng: random.Random) -> float:
    """Most batches on time; one in ten held back up to ten minutes."""
    return rng.uniform(30, 600) if rng.random() < 0.1 else 0.0


def _printed(out: str) -> list[dict]:
    rows = []
    for text in out.splitlines():
        m = _LINE.match(text)
        if m:
            rows.append({"replica": m["replica"], "message": m["message"], "n": int(m["n"]), "late": bool(m["late"])})
    return rows


@pytest.mark.parametrize("tail_mode, count", [("on", 60), ("unimplemented", 8)])
def test_ten_minutes_late_out_of_order_duplicates_and_a_suppression_gap(world, capsys, tail_mode, count):
    """60 replicas with the live tail; 8 where the server has no TailLogEntries (polling alone)."""
    clock, jobs, logging = world
    logging.tail_mode = tail_mode
    t0 = clock.time()
    job = jobs.start(Script(timeline=[(0, "PENDING"), (5, "RUNNING"), (125, "SUCCEEDED")]))
    replicas = ["workerpool0-0"] + [f"workerpool1-{i}" for i in range(count - 1)]
    written: dict[str, list[str]] = {}
    for r, replica in enumerate(replicas):
        written[replica] = write_lines(
            logging,
            job,
            replica,
            start=t0 + 10 + r * 0.01,
            end=t0 + 120,
            every=EVERY,
            flush_every=FLUSH,
            seed=r,
            lateness=_lateness if r % 2 else None,
        )
    rng = random.Random(1)
    for readable, entry in rng.sample(logging.entries, 40):  # delivered a second time, later
        message = (entry.text_payload or entry.json_payload["message"]).rstrip("\n")
        logging.add(
            job,
            entry.labels["ml.googleapis.com/task_name"],
            message,
            at=entry.timestamp.timestamp(),
            readable=readable + rng.uniform(1, 90),
            insert_id=entry.insert_id,
        )
    logging.suppress_next = 25  # the tail drops the next 25 entries it would send
    end = t0 + 125
    latest = max(readable for readable, _ in logging.entries)
    assert latest - end > 9 * 60  # some lines arrive nine minutes after the job ended
    drain = math.ceil(latest - end) + 30

    code = main(
        [
            "logs",
            job,
            "--follow",
            "--drain",
            f"{drain}s",
            "--backend",
            "vertex",
            "--region",
            "us-central1",
            "--project",
            "p",
        ]
    )
    captured = capsys.readouterr()
    rows = _printed(captured.out)

    assert code == 0
    assert "cloudtrain logs " + job in captured.err  # the straggler hint
    messages = [row["message"] for row in rows]
    assert sorted(messages) == sorted(m for lines in written.values() for m in lines)  # every line exactly once
    if tail_mode == "on":
        assert logging.tail_sessions >= 1 and logging.tail_sent > 0 and logging.suppressed == 25
    else:
        assert logging.tail_sessions == 0
    by_replica: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_replica[row["replica"]].append(row)
    suppressed = set(logging.suppressed_messages)
    held = {
        m
        for readable, e in logging.entries
        for m in [_message(e)]
        if readable - (math.ceil(e.timestamp.timestamp() / FLUSH) * FLUSH + 2.0) > 1
    }
    opened = logging.tail_opened[0] if logging.tail_opened else float("inf")
    held |= {_message(e) for readable, e in logging.entries if readable <= opened + 2}  # before the tail was there
    for replica, got in by_replica.items():
        newest = -1
        batches: dict[int, list[int]] = defaultdict(list)
        for row in got:
            assert row["late"] == (row["n"] < newest), row  # marked late exactly when older lines came after newer
            newest = max(newest, row["n"])
            if row["late"]:
                assert row["message"] in held | suppressed, row  # only lines that truly arrived late
            if row["message"] not in suppressed:
                batches[math.ceil((t0 + 10 + replicas.index(replica) * 0.01 + row["n"] * EVERY) / FLUSH)].append(
                    row["n"]
                )
        for ns in batches.values():
            assert ns == sorted(ns)  # lines that arrived together: in timestamp order


def _message(entry) -> str:
    return (entry.text_payload or entry.json_payload["message"]).rstrip("\n")


def test_an_outage_of_the_logging_endpoint_loses_nothing_and_exits_with_the_jobs_code(world, capsys, monkeypatch):
    """Cloud Logging answers UNAVAILABLE for 10 s (the fake), then its endpoint refuses connections
    for 15 s (a fault proxy in front of it, reached through CLOUDTRAIN_LOGGING_ENDPOINT), while the
    job runs: every line once, and the job's own exit code."""
    clock, jobs, logging = world
    t0 = clock.time()
    job = jobs.start(Script(timeline=[(0, "RUNNING"), (90, "FAILED")], error="exit status 3"))
    written = []
    for r in range(4):
        written += write_lines(logging, job, f"workerpool0-{r}", start=t0 + 2, end=t0 + 85, every=1.0, seed=r)
    logging.outages = [(t0 + 20, t0 + 30)]  # UNAVAILABLE for 10 s
    proxy = FaultProxy(logging.address, http=False, clock=clock.time)
    proxy.after_first_request(refuse(25, 40))  # seconds after the follower's first connection, while the job runs
    monkeypatch.setenv("CLOUDTRAIN_LOGGING_ENDPOINT", proxy.address)
    with proxy:
        code = main(["logs", job, "--follow", "--backend", "vertex", "--region", "us-central1", "--project", "p"])
    captured = capsys.readouterr()
    assert proxy.counts["closed"] == 1 and proxy.counts["forwarded"] >= 2  # refused while it followed, then back
    messages = [row["message"] for row in _printed(captured.out)]
    assert sorted(messages) == sorted(written)  # exactly once
    assert code == 1  # the job's own outcome, not an error of the follower
    assert captured.err.count("lost the connection to Cloud Logging") == captured.err.count("is back after") >= 1
