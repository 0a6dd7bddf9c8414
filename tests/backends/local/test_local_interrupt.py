"""Ctrl-C as the CLI handles it, and cloudtrain killed outright: no replica outlives it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import pid_alive

REPO = Path(__file__).resolve().parents[3]

# What `cloudtrain submit --local` does: follow the logs, cancel on Ctrl-C, exit with the state's code.
DRIVER = """
import faulthandler, json, signal, sys, types
faulthandler.register(signal.SIGUSR1)  # a hung driver shows where it hangs
from pathlib import Path
from cloudtrain.backends.local.backend import LocalBackend
from tests.backends.local.conftest import bare_image, make_spec

package, cache, tmp, env = json.loads(sys.argv[1])
spec = make_spec(Path(tmp), replica_count=2, env=env)
job = LocalBackend(cache_root=Path(cache), stop_grace_s=2.0, gpu_count=lambda: 0,
                   image_for=lambda spec: bare_image()).submit(
    spec, types.SimpleNamespace(**package))
try:
    for line in job.logs(follow=True):
        print(f"[{line.replica}] {line.message}", flush=True)
    status = job.wait()
except KeyboardInterrupt:
    status = job.cancel()
print("STATE", status.state.value, flush=True)
sys.exit(status.state.exit_code)
"""


def _driver(fake_package, shared_cache, tmp_path) -> tuple[subprocess.Popen, list[int]]:
    pids_dir = tmp_path / "pids"
    pids_dir.mkdir()
    package = {k: str(getattr(fake_package, k)) for k in ("path", "sha256", "name", "version", "filename")}
    env = {"FAKE_PLAN": json.dumps({"chief": "hang", "worker-0": "hang"}), "FAKE_PIDS": str(pids_dir)}
    arg = json.dumps([package, str(shared_cache), str(tmp_path), env])
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, arg], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    assert driver.stdout is not None and driver.stderr is not None
    while time.monotonic() < deadline:
        files = [pids_dir / n for n in ("chief", "worker-0")]
        if all(f.is_file() and f.read_text().strip() for f in files):
            return driver, [int(p) for f in files for p in f.read_text().split()]
        assert driver.poll() is None, driver.stdout.read() + driver.stderr.read()
        time.sleep(0.05)
    driver.kill()
    raise AssertionError("replicas did not start")


def _gone(pids: list[int], timeout: float = 30) -> bool:  # generous: a loaded 2-core box is slow to reap
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.05)
    return not any(pid_alive(p) for p in pids)


def _communicate(driver: subprocess.Popen, timeout: float) -> str:
    try:
        return driver.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        driver.send_signal(signal.SIGUSR1)  # faulthandler: every thread's stack to stderr
        time.sleep(1)
        driver.kill()
        out, err = driver.communicate()
        raise AssertionError(
            f"the driver hung after Ctrl-C; its threads:\n{err[-6000:]}\nstdout:\n{out[-2000:]}"
        ) from None


def test_ctrl_c_cancels_every_replica_and_its_children(fake_package, shared_cache, tmp_path):
    driver, pids = _driver(fake_package, shared_cache, tmp_path)
    driver.send_signal(signal.SIGINT)
    out = _communicate(driver, timeout=60)
    assert driver.returncode == 130 and "STATE CANCELLED" in out
    assert _gone(pids), "a replica or one of its children outlived the cancelled job"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_replicas_die_with_a_killed_cloudtrain(fake_package, shared_cache, tmp_path):
    driver, pids = _driver(fake_package, shared_cache, tmp_path)
    replicas = pids[0::2]  # each replica's own pid; their children are the odd entries
    driver.kill()
    driver.wait(timeout=10)
    assert _gone(replicas), "a replica outlived the cloudtrain process that started it"
    for pid in pids[1::2]:  # a replica's own children are beyond PDEATHSIG's reach: clean up
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
