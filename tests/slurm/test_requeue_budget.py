"""The batch shell's requeue decision (script.requeue_lines) run by bash with stand-ins for ``scontrol`` and
the job's ``python3``: ``budget.max_gpu_hours`` bounds the sum over all runs, the next run gets the time left."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from cloudtrain.backends.slurm import script
from cloudtrain.config.load import load_config
from cloudtrain.spec import build_spec
from tests.slurm.test_slurm_config import CASES, NOW, write_config

STAND_IN = '#!/bin/sh\necho "$(basename "$0") $*" >> "{calls}"\n'
PYTHON = "#!/bin/sh\necho {checkpoints}\n"  # the job's python3, asked for the chief's checkpoint folder


def decide(tmp_path: Path, elapsed: list[int], checkpoints: tuple[str, ...] = ()) -> tuple[str, list[str]]:
    """Run the requeue lines after runs that took ``elapsed`` seconds each; (output, scontrol calls)."""
    spec = build_spec(load_config(write_config(tmp_path, CASES["hyperpod-requeue"])), now=NOW, suffix="abc123")
    run = tmp_path / "run"
    for n, seconds in enumerate(elapsed):
        (run / "slurm" / f"r{n}").mkdir(parents=True)
        (run / "slurm" / f"r{n}" / "batch.elapsed").write_text(f"{seconds}\n")
    folder = tmp_path / "bin"
    folder.mkdir()
    calls = tmp_path / "calls"
    (folder / "scontrol").write_text(STAND_IN.format(calls=calls))
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    for name in checkpoints:
        (ckpt / name).mkdir()
    (folder / "python3").write_text(PYTHON.format(checkpoints=ckpt))
    for tool in folder.iterdir():
        tool.chmod(0o755)
    body = script.requeue_lines(spec)
    restart = len(elapsed) - 1
    head = f'RUN={run}\nrestart={restart}\nout="$RUN/slurm/r$restart"\nSLURM_JOB_ID=7\nsay() {{ echo "$*"; }}\n'
    text = f"{head}{body}echo ended 124\n"
    result = subprocess.run(
        ["bash", "-c", text],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{folder}:{os.environ['PATH']}"},
        check=True,
    )
    return result.stdout, calls.read_text().splitlines() if calls.exists() else []


def test_the_gpu_hours_cap_counts_every_run_and_cuts_the_next_runs_time(tmp_path):
    """8 GPU-hours over 2 nodes × 4 GPUs: 3,600 s of wall time in all runs together."""
    out, calls = decide(tmp_path, [1000, 1000], ("ckpt-120", "ckpt-80"))
    assert "requeue 2 of 3; the next run resumes from the checkpoint at step 120 (" in out, out
    assert calls == ["scontrol update JobId=7 TimeLimit=26", "scontrol requeue 7"]  # 1,600 s left: 26 min


def test_a_spent_budget_ends_the_job_instead_of_requeueing(tmp_path):
    out, calls = decide(tmp_path, [1800, 1500])  # 3,300 of 3,600 s: less than the warning plus a minute left
    assert "cloudtrain: not requeued: budget.max_gpu_hours (8) spent: 7.33 GPU-hours over 2 runs" in out, out
    assert out.rstrip().endswith("ended 124") and calls == []


def test_max_requeues_reached_ends_the_job(tmp_path):
    out, calls = decide(tmp_path, [10] * 4)  # the fourth run (restart 3) of a job with max_requeues 3
    assert "not requeued: slurm.max_requeues (3) reached" in out and calls == []
