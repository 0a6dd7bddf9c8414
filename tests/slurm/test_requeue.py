"""A warning before the time limit (here sent by hand with `scancel --batch --signal=USR1`): the batch shell
stops the task, the trainer saves a checkpoint, `scontrol requeue`, and the requeued job resumes at the
saved step, writing new output files (r1/) that the same `cloudtrain submit` keeps following."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.slurm.test_submit import REPO, job_id_of, wait_for_text
from tests.slurm.test_trainer import events

pytestmark = [pytest.mark.slow, pytest.mark.server, pytest.mark.tf]

EPOCHS, STEPS = 5, 40  # a notice after epoch 1 lands mid-run; the resumed run trains the rest
ARGS = f"[--data=digits, --epochs={EPOCHS}, --steps-per-epoch={STEPS}, --steps-per-execution=1]"


def test_a_warned_job_checkpoints_requeues_and_resumes_at_the_saved_step(slurm, workdir, tmp_path):
    log = tmp_path / "submit.log"
    with open(log, "w") as out:
        submit = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cloudtrain",
                "submit",
                "--config",
                "job_configs/slurm.yaml",
                "--set",
                f"slurm.workdir={workdir}",
                "--set",
                "slurm.requeue=true",
                "--set",
                "replica_count=1",
                "--set",
                f"args={ARGS}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO,
        )
    try:
        job_id = job_id_of(wait_for_text(log, "created", timeout=300))
        run = Path((workdir / "jobs" / job_id).read_text())
        wait_for_text(run / "slurm/r0/task-0.log", '{"event": "epoch", "epoch": 1,', timeout=300)
        slurm.run("scancel", "--batch", "--signal=USR1", job_id)
        assert submit.wait(timeout=400) == 0, log.read_text()
    finally:
        if submit.poll() is None:
            submit.kill()
    first, second = events(run / "slurm/r0/task-0.log"), events(run / "slurm/r1/task-0.log")
    saved = first["preempted"]["step"]
    assert STEPS <= saved < EPOCHS * STEPS
    assert second["plan"]["resume_step"] == saved
    assert second["done"]["steps"] == EPOCHS * STEPS
    text = log.read_text()
    assert f"requeue 1 of 3; the next run resumes from the checkpoint at step {saved} " in text, text
    assert "SUCCEEDED" in text, text
    # one follower across the restart: every epoch's line once, from whichever run trained it
    assert [len(re.findall(rf"node1/task-0 \| epoch {k}/{EPOCHS} ", text)) for k in range(1, EPOCHS + 1)] == [
        1
    ] * EPOCHS
    tasks = json.loads((run / "slurm/r1/task-0.json").read_text())
    assert tasks["restart"] == 1 and tasks["exit"] == 0
