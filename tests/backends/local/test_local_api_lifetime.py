"""A local run started from the Python API lives as the CLI's does: ``submit(cfg, local=True, detach=True)``
outlives the script (``--detach``); without ``detach`` the script's exit, or a Ctrl-C that ends it, stops the
run and records it CANCELLED with its real wall time, never FAILED "without a summary". Each script is a real
Python process (tests/packages/echo_lines on an image without TensorFlow)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

ECHO_LINES = REPO / "tests" / "packages" / "echo_lines"
CONFIG = """\
name: lifetime
backend: local
region: us-central1
project: my-project
machine: {type: n1-standard-4}
package: {path: echo_lines, module: echo_lines.task}
args: [--line, started, --hold]
"""
SCRIPT = """\
import importlib, sys, time
import cloudtrain
from cloudtrain.backends.local.backend import LocalBackend
from tests.backends.local.conftest import bare_image

from pathlib import Path
local = LocalBackend(cache_root=Path(sys.argv[1]), gpu_count=lambda: 0, image_for=lambda spec: bare_image(), log=print)
importlib.import_module("cloudtrain.backends.local.backend").BACKEND = local
job = cloudtrain.submit(cloudtrain.load_config("job.yaml"), local=True, detach={detach})
print("job", job.job_id, flush=True)
for line in job.logs(follow=True):
    if line.message == "started":
        print("running", flush=True)
        {then}
"""


@pytest.fixture
def project(tmp_path, shared_cache):
    root = tmp_path / "project"
    root.mkdir()
    shutil.copytree(ECHO_LINES, root / "echo_lines")
    (root / "job.yaml").write_text(CONFIG)
    return root


def start(project: Path, cache: Path, *, detach: bool, then: str) -> tuple[subprocess.Popen[str], str]:
    (project / "script.py").write_text(SCRIPT.format(detach=detach, then=then))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "script.py", str(cache)], cwd=project, env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    job = next(line.split()[1] for line in proc.stdout if line.startswith("job "))
    assert proc.stdout.readline().strip() == "running"
    return proc, job


def recorded(project: Path, job: str) -> dict:
    return json.loads((project / "cloudtrain-runs" / job / "local-run" / "status.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("how", ["returns", "ctrl-c"])
def test_the_scripts_end_cancels_its_run_with_the_real_wall_time(project, shared_cache, how) -> None:
    then = "time.sleep(1.5); sys.exit(0)" if how == "returns" else "time.sleep(600)"
    began = time.monotonic()
    proc, job = start(project, shared_cache, detach=False, then=then)
    if how == "ctrl-c":
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    took = time.monotonic() - began
    data = recorded(project, job)
    assert data["native_state"] == "cancelled", data
    assert "as the Python process that started it exited" in data["message"]
    assert 1.4 <= data["details"]["wall_time_s"] <= took, data["details"]["wall_time_s"]
    assert "without a summary" not in json.dumps(data)


@pytest.mark.slow
def test_a_detached_run_outlives_its_script(project, shared_cache) -> None:
    proc, job = start(project, shared_cache, detach=True, then="sys.exit(0)")
    assert proc.wait(timeout=120) == 0
    time.sleep(1)
    assert recorded(project, job)["native_state"] == "running"  # its own supervisor holds it
    done = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "cancel", job], cwd=project, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert recorded(project, job)["native_state"] == "cancelled"
    assert "Python process" not in recorded(project, job)["message"]
