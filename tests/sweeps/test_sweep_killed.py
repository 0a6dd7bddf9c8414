"""A local sweep killed mid-trial (``kill -9``, a crash: no handler runs) resumes with
``cloudtrain sweep resume``: the finished trial is not run again, the interrupted one runs again with
its own parameters. The trials run a user's script with no TensorFlow (tests/packages/sweep_score);
tests/sweeps/test_sweep_local.py runs a sweep of the real trainer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cloudtrain.text.numbers import measured
from tests.conftest import run_cli

pytestmark = pytest.mark.slow


def test_a_killed_sweep_resumes_without_rerunning_finished_trials(sweep_dir: Path) -> None:
    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(sweep_dir / "cache"), "PYTHONUNBUFFERED": "1"}
    (sweep_dir / "hold").write_text("1")  # trial 0 passes, trial 1 waits until the sweep is killed
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudtrain", "submit", "-c", "sweep.yaml"],
        cwd=sweep_dir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen, deadline = [], time.monotonic() + 1800  # trial 0 may first build the image's local environment
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            seen.append(line)
            if "trial   1 started" in line:
                break
            assert time.monotonic() < deadline, "".join(seen)
    finally:
        proc.send_signal(signal.SIGKILL)  # a crash: no handler runs
        proc.wait(30)
    first = next(line for line in seen if "trial   0 complete" in line)
    sweep_id = next(line for line in seen if line.startswith("Sweep ")).split()[1]

    (sweep_dir / "hold").unlink()
    resumed = run_cli("sweep", "resume", sweep_id, "-o", "json", cwd=sweep_dir, env=env, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "interrupted trial 1 runs again" in resumed.stderr
    assert "trial   0 started" not in resumed.stderr  # the finished trial is not run again
    table = json.loads(resumed.stdout)
    assert [(t["trial"], t["state"]) for t in table["trials"]] == [
        ("0", "COMPLETE"),
        ("1", "COMPLETE"),
        ("2", "COMPLETE"),
    ]
    trial0, trial1 = table["trials"][:2]
    assert f"score={measured(trial0['value'])}" in first  # shown to 4 significant digits
    started = next(line for line in seen if "trial   1 started" in line)
    assert f"lr={measured(trial1['params']['lr'])}" in started  # the interrupted trial, again, with its own params
    # the interrupted run is kept beside the rerun, its record intact; the rerun has a folder of its own
    folder = sweep_dir / "cloudtrain-runs" / sweep_id
    kept = json.loads((folder / "trial-001.interrupted" / "local-run" / "status.json").read_text())
    assert kept["job_id"] == f"{sweep_id}-t001" and kept["state"] != "SUCCEEDED"
    rerun = json.loads((folder / "trial-001" / "local-run" / "status.json").read_text())
    assert rerun["state"] == "SUCCEEDED"
    assert not (folder / "trial-000.interrupted").exists()  # a finished trial is never set aside
