"""The Vertex follower's receive-time margin (cloudtrain/backends/vertex/logs.py, ``TailPolicy.margin``).

Cloud Logging stamps ``receiveTimestamp`` on whichever frontend took the entry; two frontends'
clocks can disagree, so an entry that arrives now may carry a receive time older than the newest
one the follower has already seen. The follower's floor trails the newest receive time by the
margin (30 s), so such an entry is still read — and, read again on the next pass, printed once.
"""

from __future__ import annotations

import json

import pytest

import cloudtrain.backends.vertex as vertex_module
from cloudtrain.cli import main
from tests.fakes.vertex_jobs import Script

pytestmark = pytest.mark.server

SKEW_S = 20.0  # frontend B's clock runs this far behind frontend A's: inside the 30 s margin


def test_an_entry_stamped_by_a_slow_frontend_clock_is_printed_once(
    backend, monkeypatch, jobs, logging_fake, clock, capsys
):
    monkeypatch.setattr(vertex_module, "BACKEND", backend)
    t0 = clock.time()
    job = jobs.start(Script(timeline=[(0, "RUNNING"), (200, "SUCCEEDED")]))
    for i in range(150):  # frontend A: a line a second, stamped when it arrives
        logging_fake.add(job, "workerpool0-0", f"a{i}", at=t0 + 2 + i)
    skewed = {}
    for j in range(15):  # frontend B: arrives a second after it was written, stamped SKEW_S in the past
        arrives = 11 + 10 * j  # seconds after t0
        logging_fake.add(
            job, "workerpool0-1", f"b{j}", at=t0 + arrives - 1, readable=t0 + arrives, received=t0 + arrives - SKEW_S
        )
        skewed[f"b{j}"] = arrives
    code = main(
        ["logs", job, "--follow", "-o", "json", "--backend", "vertex", "--region", "us-central1", "--project", "p"]
    )
    assert code == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    messages = [p["message"] for p in printed]
    assert sorted(messages) == sorted([f"a{i}" for i in range(150)] + list(skewed))  # every line, exactly once
    # Each skewed entry was printed after a line received later than its own stamp (a{i}: t0 + 2 + i):
    # the follower had seen a newer receive time, and read it anyway.
    for name, arrives in skewed.items():
        before = messages[: messages.index(name)]
        assert any(m.startswith("a") and int(m[1:]) + 2 > arrives - SKEW_S for m in before), name


def test_an_entry_received_15_minutes_after_it_was_written_is_printed_once(
    backend, monkeypatch, jobs, logging_fake, clock, capsys
):
    """Remembered by its receive time, not its own timestamp: forgotten by timestamp (older than
    the 10-minute forget window at once), the next read would print it again."""
    monkeypatch.setattr(vertex_module, "BACKEND", backend)
    t0 = clock.time()
    job = jobs.start(Script(timeline=[(0, "RUNNING"), (1200, "SUCCEEDED")]))
    for i in range(110):
        logging_fake.add(job, "workerpool0-0", f"a{i}", at=t0 + 2 + 10 * i)
    logging_fake.add(job, "workerpool0-1", "written at 100 s, received at 1000 s", at=t0 + 100, readable=t0 + 1000)
    code = main(
        ["logs", job, "--follow", "-o", "json", "--backend", "vertex", "--region", "us-central1", "--project", "p"]
    )
    assert code == 0
    messages = [json.loads(line)["message"] for line in capsys.readouterr().out.splitlines()]
    assert messages.count("written at 100 s, received at 1000 s") == 1
    assert sorted(m for m in messages if m.startswith("a")) == sorted(f"a{i}" for i in range(110))
