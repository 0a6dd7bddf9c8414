"""Run ``python -m trainer.task`` in a subprocess with a clean platform environment."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from trainer.events import parse_events

REPO = Path(__file__).resolve().parents[2]
_PLATFORM_PREFIXES = ("AIP_", "SM_", "TF_CONFIG", "CLUSTER_SPEC", "CLOUD_ML_", "TRAINING_JOB_NAME")


def trainer_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_PLATFORM_PREFIXES)}
    env.update(PYTHONPATH=str(REPO), TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    events: list[dict] = field(default_factory=list)
    dir: Path = Path()  # where the run wrote its outputs: set by the fixture that knows

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.events if e["event"] == kind]

    def one(self, kind: str) -> dict:
        found = self.of(kind)
        assert len(found) == 1, f"expected one {kind!r} event, got {len(found)}\n{self.stderr[-3000:]}"
        return found[0]


def start(args: list[str], cwd: Path, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "trainer.task", *args],
        cwd=cwd,
        env=trainer_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def finish(proc: subprocess.Popen, timeout: float = 500) -> Run:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        out, err = proc.communicate()
        err += f"\n[test harness: killed after {timeout} s]"
    return Run(proc.returncode, out, err, parse_events(out))


def kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()
