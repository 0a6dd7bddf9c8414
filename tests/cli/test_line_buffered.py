"""A followed job's lines reach a pipe as they are printed (``submit | tee``, CI logs, a script reading them),
also where PYTHONUNBUFFERED is not set: Python buffers a pipe by 8 KiB blocks by default, and a Ctrl-C test
that waited for a line then hung (found by make test-fresh, whose environment has no PYTHONUNBUFFERED)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO


def test_the_cli_writes_lines_to_a_pipe_as_they_come_without_pythonunbuffered():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    code = (
        "import sys; from cloudtrain.cli import _line_buffered; _line_buffered(); "
        "print(sys.stdout.line_buffering, sys.stderr.line_buffering)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
