"""Requeue bounded by ``slurm.max_requeues`` (the warning sent by hand, ``scancel --batch --signal=USR1``):
each requeue says its count and the checkpoint the next run resumes from, or that there is none; the
warning after the last requeue ends the job timed out (124)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.slurm.test_submit import REPO, job_id_of, probe_config, wait_for_text

pytestmark = [pytest.mark.slow, pytest.mark.server]


def test_a_job_is_requeued_at_most_max_requeues_times_each_with_its_count(slurm, workdir, tmp_path):
    config = probe_config(tmp_path, workdir, ["--sleep=300", "--lines=1"])
    text = config.read_text().replace("slurm:\n", "slurm:\n  requeue: true\n  max_requeues: 2\n")
    config.write_text(text.replace("replica_count: 2\n", "replica_count: 1\n"))
    log = tmp_path / "submit.log"
    with open(log, "w") as out:
        submit = subprocess.Popen(
            [sys.executable, "-m", "cloudtrain", "submit", "--config", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO,
        )
    try:
        job_id = job_id_of(wait_for_text(log, "created", timeout=300))
        run = Path((workdir / "jobs" / job_id).read_text())
        for restart in range(3):
            wait_for_text(run / f"slurm/r{restart}/task-0.log", "line 0 from single:0")
            if restart == 1:  # the first run saved nothing; the second "saved" step 40
                plan = json.loads((run / "slurm/tasks.json").read_text())
                (Path(plan["tasks"][0]["dirs"][1]) / "ckpt-40").mkdir(parents=True)
            slurm.run("scancel", "--batch", "--signal=USR1", job_id)
        assert submit.wait(timeout=300) == 124, log.read_text()
    finally:
        if submit.poll() is None:
            submit.kill()
    text = log.read_text()
    assert "cloudtrain: requeue 1 of 2; the next run starts over: no checkpoint was saved" in text, text
    assert "cloudtrain: requeue 2 of 2; the next run resumes from the checkpoint at step 40 (" in text, text
    assert "cloudtrain: not requeued: slurm.max_requeues (2) reached" in text, text
    assert text.count("cloudtrain: requeue ") == 2, text
    assert "TIMED_OUT" in text, text
