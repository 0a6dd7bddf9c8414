"""The end of a multi-worker run (trainer/shutdown.py), without TensorFlow: who waits for whom.

The two-process runs in test_multi_worker.py check the real end (no abort lines);
bench/multi_worker_end.py repeats it to measure the rate.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from tests.trainer.helpers import REPO
from trainer import shutdown
from trainer.cluster import SINGLE, Cluster

WORKERS = ("10.0.0.1:2222", "10.0.0.2:2222", "10.0.0.3:2222")


def _cluster(rank: int) -> Cluster:
    return Cluster(
        task_type="worker",
        task_index=rank,
        workers=WORKERS,
        source="TF_CONFIG",
        tf_config={"cluster": {"worker": list(WORKERS)}, "task": {"type": "worker", "index": rank}},
    )


class _Strategy:
    class extended:
        health_checks_stopped = False

        @classmethod
        def _stop_check_health_thread(cls):
            cls.health_checks_stopped = True


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


@pytest.fixture
def barrier(monkeypatch):
    met = []
    monkeypatch.setattr(shutdown, "_barrier", lambda strategy, timeout_s: met.append(timeout_s))
    return met


def test_one_machine_meets_nobody(barrier):
    assert shutdown.leave_together(_Strategy, SINGLE, peer_alive=lambda a: pytest.fail("probed"))
    assert barrier == []


def test_the_chief_leaves_only_when_every_other_worker_is_gone(barrier):
    clock, probes = _Clock(), []
    exits = {"10.0.0.2:2222": 0.3, "10.0.0.3:2222": 1.2}  # when each other worker's process ends

    def alive(address):
        probes.append(address)
        return clock.now < exits[address]

    assert shutdown.leave_together(_Strategy, _cluster(0), peer_alive=alive, clock=clock, sleep=clock.sleep)
    assert barrier == [shutdown.TIMEOUT_S] and _Strategy.extended.health_checks_stopped
    assert "10.0.0.1:2222" not in probes  # not itself
    assert 1.2 <= clock.now < 1.2 + 2 * shutdown.POLL_S  # right after the last one left, not a fixed grace
    assert probes.count("10.0.0.2:2222") < probes.count("10.0.0.3:2222")  # a gone worker is not probed again


def test_other_workers_leave_right_after_the_barrier(barrier):
    clock = _Clock()
    assert shutdown.leave_together(
        _Strategy, _cluster(2), peer_alive=lambda a: pytest.fail("probed"), clock=clock, sleep=clock.sleep
    )
    assert barrier and clock.now == 0.0


def test_a_worker_that_never_leaves_holds_the_chief_only_so_long(barrier):
    clock = _Clock()
    assert shutdown.leave_together(_Strategy, _cluster(0), peer_alive=lambda a: True, clock=clock, sleep=clock.sleep)
    assert shutdown.PEERS_GONE_TIMEOUT_S <= clock.now < shutdown.PEERS_GONE_TIMEOUT_S + 2 * shutdown.POLL_S


def test_a_failed_barrier_is_one_warning_not_a_failed_run(monkeypatch, capsys):
    def broken(strategy, timeout_s):
        raise RuntimeError("DEADLINE_EXCEEDED: Barrier timed out. Id: cloudtrain_end_of_run\nmore detail")

    monkeypatch.setattr(shutdown, "_barrier", broken)
    assert shutdown.leave_together(_Strategy, _cluster(0), peer_alive=lambda a: pytest.fail("probed")) is False
    assert capsys.readouterr().err == (
        "WARNING: workers did not all reach the end-of-run barrier: DEADLINE_EXCEEDED: Barrier timed out. "
        "Id: cloudtrain_end_of_run\n"
    )


def test_a_port_answers_while_its_process_listens_and_not_after():
    server = socket.create_server(("127.0.0.1", 0))
    address = f"127.0.0.1:{server.getsockname()[1]}"
    assert shutdown.port_open(address)
    server.close()
    assert not shutdown.port_open(address)
    assert not shutdown.port_open("not-an-address")


def test_end_process_runs_the_exit_hooks_keeps_the_output_and_skips_the_teardown(tmp_path):
    hooked = tmp_path / "autograph-module.py"  # what TensorFlow's autograph leaves in the temp folder
    hooked.write_text("")
    code = (
        "import atexit, logging, os, sys, threading, time\nfrom trainer.shutdown import end_process\n"
        "sys.stdout.write('no newline yet'); sys.stderr.write('err too')\n"
        "logging.basicConfig(); logging.getLogger('x').warning('logged')\n"
        f"atexit.register(os.remove, {str(hooked)!r})\n"
        "threading.Thread(target=time.sleep, args=(600,)).start()  # a normal exit would wait for it\n"
        "end_process(3)\n"
    )
    ended = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert ended.returncode == 3
    assert ended.stdout == "no newline yet"  # flushed
    assert ended.stderr.startswith("err too") and "WARNING:x:logged" in ended.stderr
    assert not hooked.exists()  # the exit hooks ran
