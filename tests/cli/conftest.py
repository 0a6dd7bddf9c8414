"""The CLI run as people and scripts run it: a real process, its output a pipe (or a terminal)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.backends.vertex.conftest import backend, clock, gcs, jobs, logging_fake  # noqa: F401 — the Vertex fakes
from tests.conftest import REPO, run_cli

CHATTY = REPO / "tests" / "packages" / "chatty_trainer"


@pytest.fixture(scope="session")
def cli_cache(tmp_path_factory) -> Path:
    """One cloudtrain cache for these tests: the chatty package's environment is built once."""
    return tmp_path_factory.mktemp("cli-cache")


@pytest.fixture
def cli(cli_cache):
    """Run ``cloudtrain ARGS`` in a subprocess with stdout and stderr as pipes."""

    def run(*args: str, cwd: Path = REPO, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
        environ = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(cli_cache), **env}
        environ.pop("FORCE_COLOR", None)
        return run_cli(*args, cwd=cwd, env=environ, timeout=timeout)

    return run


def on_terminal(*args: str, cwd: Path = REPO, columns: int = 80) -> str:
    """``cloudtrain ARGS`` with stdout and stderr on a pseudo-terminal; what the terminal showed."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudtrain", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the terminal's other end closed
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode("utf-8", errors="replace")


@pytest.fixture
def chatty(tmp_path):
    """Write a local-run config for the chatty package; returns its path."""

    def write(*, replicas: int = 1, args: str = "[]", extra: str = "", name: str = "chatty.yaml") -> Path:
        path = tmp_path / name
        path.write_text(
            textwrap.dedent(f"""\
            name: chatty
            backend: local
            target: vertex
            region: us-central1
            machine:
              type: n1-standard-4
            replica_count: {replicas}
            package:
              path: {CHATTY}
              module: chatty_trainer.task
            args: {args}
            """)
            + extra
        )
        return path

    return write
