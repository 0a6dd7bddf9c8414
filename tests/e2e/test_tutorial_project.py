"""The tutorial's project (docs/tutorial/first-job.md) runs with --local as the page says: the data
channel reaches the code at $SM_CHANNEL_TRAIN, it learns, the model lands where Vertex keeps it, and
`cloudtrain report` of that run writes its report."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.tf]


def test_the_tutorial_job_trains_on_its_data_channel_here(tmp_path, tf_cache, monkeypatch):
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tf_cache))  # the Vertex TF 2.17 image layer, built once per machine
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "cloudtrain",
            "submit",
            "--config",
            "docs/tutorial/my-project/job.yaml",
            "--local",
            "--set",
            f"output_dir={tmp_path / 'run'}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    accuracy = re.search(r"metrics\.val_accuracy:?\s+([0-9.]+)", result.stdout)
    assert accuracy and float(accuracy[1]) >= 0.9, result.stdout[-2000:]
    assert (tmp_path / "run" / "model" / "saved_model.pb").exists()
    channel = tmp_path / "run" / "local-run" / "data" / "train"
    assert channel.resolve() == (REPO / "docs" / "tutorial" / "my-project" / "data" / "train").resolve()

    job = re.search(r"Job (my-points-\S+): SUCCEEDED", result.stdout)
    assert job
    report = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "report", job[1], "--out", str(tmp_path / "report")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert report.returncode == 0, report.stdout[-2000:] + report.stderr[-2000:]
    assert job[1] in (tmp_path / "report" / "report.html").read_text()
