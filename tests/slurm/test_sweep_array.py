"""Sweeps on the real test cluster: a user's script (no TensorFlow) swept as one job array.

Each array task asks Optuna for its trial through the journal on the shared workdir, runs the trial
as one job runs, and tells the result; ``sweep results``, ``status``, ``logs``, ``cancel`` (the whole
array or one trial) and ``sweep resume`` after a kill read and act on the cluster."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SWEEP_SCORE = REPO / "tests" / "packages" / "sweep_score"
pytestmark = [pytest.mark.slow, pytest.mark.server]


def cloudtrain(*args: str, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cloudtrain", *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, **kwargs
    )


def sweep_config(tmp_path: Path, workdir: Path, *, trials: int = 3, parallel: int = 2, args: list[str] = ()) -> Path:
    shutil.copytree(SWEEP_SCORE, tmp_path / "sweep_score")
    path = tmp_path / "sweep.yaml"
    path.write_text(
        textwrap.dedent(f"""
        name: score-array
        backend: slurm
        slurm: {{workdir: {workdir}, partition: debug}}
        replica_count: 1
        machine: {{accelerator_count: 0}}
        package: {{path: sweep_score, module: sweep_score.task}}
        args: {json.dumps(list(args))}
        max_runtime: 10m
        sweep:
          metric: score
          goal: maximize
          max_trials: {trials}
          parallel_trials: {parallel}
          algorithm: random
          seed: 3
          params:
            lr: {{min: 0.0001, max: 1.0, scale: log}}
        """)
    )
    return path


def results_of(sweep_id: str) -> dict:
    out = cloudtrain("sweep", "results", sweep_id, "-o", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_sweep_runs_its_trials_as_one_job_array(slurm, workdir, tmp_path):
    config = sweep_config(tmp_path, workdir, trials=3, parallel=2)
    done = cloudtrain("submit", "--config", str(config))
    assert done.returncode == 0, done.stdout + done.stderr
    sweep_id = re.search(r"Sweep (\d+) created", done.stdout)[1]
    table = results_of(sweep_id)
    assert table["state"] == "SUCCEEDED" and len(table["trials"]) == 3
    for trial in table["trials"]:
        assert trial["state"] == "COMPLETE"
        assert trial["value"] == pytest.approx(-((math.log10(trial["params"]["lr"]) + 2) ** 2))
        assert re.fullmatch(rf"{sweep_id}_\d", trial["job_id"])
    print(done.stdout, done.stderr)
