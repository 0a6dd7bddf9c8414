"""``cloudtrain submit --local --detach`` of a sweep: the trials run on after the command returns,
``status`` reads the sweep as running, ``cancel`` stops it as Ctrl-C would, and ``sweep resume``
finishes it. The trials run a user's script with no TensorFlow (tests/packages/sweep_score)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.slow


def _cli(folder: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(folder / "cache"), "COLUMNS": "250"}
    return run_cli(*args, cwd=folder, env=env, timeout=timeout)


def _submit(folder: Path) -> tuple[str, str]:
    """``submit --detach`` of the sweep: its id and what the command printed."""
    submitted = _cli(folder, "submit", "--config", "sweep.yaml", "--detach")
    assert submitted.returncode == 0, submitted.stderr
    sweep_id = next(line for line in submitted.stdout.splitlines() if line.startswith("Sweep ")).split()[1]
    return sweep_id, submitted.stdout


def _status(folder: Path, sweep_id: str) -> dict:
    done = _cli(folder, "status", sweep_id, "-o", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _until(check, what: str, within: float = 240) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def _owner_pid(folder: Path, sweep_id: str) -> int:
    return json.loads((folder / "cloudtrain-runs" / sweep_id / "owner.json").read_text())["pid"]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _trial_started(folder: Path, sweep_id: str) -> Path:
    """Wait until the first trial's replicas run: the first test of a fresh checkout builds the image's local
    environment first (minutes on 2 cores, longer while other tests build theirs), which the bounds after it
    must not include. The trial's status file, whose pids the cancel test reads."""
    trial_status = folder / "cloudtrain-runs" / sweep_id / "trial-000" / "local-run" / "status.json"
    _until(trial_status.is_file, "the first trial's environment and replicas", within=1800)
    return trial_status


def _score(lr: float) -> float:
    return -((math.log10(lr) + 2) ** 2)  # what sweep_score prints


def test_a_detached_local_sweep_runs_on_after_submit_returns_and_ends_succeeded(sweep_dir: Path) -> None:
    (sweep_dir / "hold").touch()  # the first trial waits until the test has seen the sweep running
    sweep_id, out = _submit(sweep_dir)
    assert "runs detached (pid " in out and f"cloudtrain-runs/{sweep_id}/sweep.log" in out, out
    assert f"cancel:  cloudtrain cancel {sweep_id}" in out
    owner = _owner_pid(sweep_dir, sweep_id)
    assert _alive(owner), "submit returned and the sweep's owner runs on"
    running = _status(sweep_dir, sweep_id)
    assert running["state"] == "RUNNING" and running["max_trials"] == 3, running

    _trial_started(sweep_dir, sweep_id)
    (sweep_dir / "hold").unlink()
    _until(lambda: _status(sweep_dir, sweep_id)["state"] == "SUCCEEDED", "the sweep to finish")
    done = _status(sweep_dir, sweep_id)
    assert done["trials"] == {"COMPLETE": 3}
    results = _cli(sweep_dir, "sweep", "results", sweep_id, "-o", "json")
    trials = json.loads(results.stdout)["trials"]
    assert [t["value"] for t in trials] == pytest.approx([_score(t["params"]["lr"]) for t in trials])
    best = max(trials, key=lambda t: t["value"])
    assert (done["best_trial"], done["best_value"]) == (best["trial"], best["value"])
    log = (sweep_dir / "cloudtrain-runs" / sweep_id / "sweep.log").read_text()
    assert f"Sweep {sweep_id} runs detached (pid {owner})" in log
    assert [log.count(f"trial {n:>3} complete") for n in range(3)] == [1, 1, 1], log
    _until(lambda: not _alive(owner), "the owner to exit", within=30)
    assert not (sweep_dir / "cloudtrain-runs" / sweep_id / "owner.json").exists()  # released when done


def test_cancel_stops_a_detached_sweep_and_resume_reruns_the_interrupted_trial(sweep_dir: Path) -> None:
    (sweep_dir / "hold").touch()
    sweep_id, _ = _submit(sweep_dir)
    owner = _owner_pid(sweep_dir, sweep_id)
    log = sweep_dir / "cloudtrain-runs" / sweep_id / "sweep.log"
    _until(lambda: "trial   0 started" in log.read_text(), "the first trial to start")
    trial_status = _trial_started(sweep_dir, sweep_id)
    replicas = json.loads(trial_status.read_text())["details"]["pids"].values()

    resumed_twice = _cli(sweep_dir, "sweep", "resume", sweep_id)
    assert resumed_twice.returncode == 2  # one sweep, one process running its trials
    assert f"sweep {sweep_id} is running (pid {owner})" in resumed_twice.stderr

    cancelled = _cli(sweep_dir, "cancel", sweep_id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert "STOPPED" in cancelled.stdout and f"resume:  cloudtrain sweep resume {sweep_id}" in cancelled.stdout
    assert not _alive(owner), "cancel waits until the sweep's process has ended"
    _until(lambda: not any(_alive(pid) for pid in replicas), "the trial's replicas to die with it", within=10)
    assert _status(sweep_dir, sweep_id)["state"] == "STOPPED"
    assert f"Sweep {sweep_id} stopped; finished trials are kept." in log.read_text()  # as on Ctrl-C

    (sweep_dir / "hold").unlink()
    resumed = _cli(sweep_dir, "sweep", "resume", sweep_id, "-o", "json", timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    assert "interrupted trial 0 runs again" in resumed.stderr
    table = json.loads(resumed.stdout)
    assert [(t["trial"], t["state"]) for t in table["trials"]] == [
        ("0", "COMPLETE"),
        ("1", "COMPLETE"),
        ("2", "COMPLETE"),
    ]
    assert _status(sweep_dir, sweep_id)["state"] == "SUCCEEDED"
