"""``cloudtrain report JOB`` finds a local run by the id submit printed, from any directory, as
``status`` and ``logs`` do (the tutorial's last step: docs/tutorial/first-job.md)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.slow


def test_report_of_a_local_run_by_its_id_from_another_directory(cli, chatty, tmp_path):
    config = chatty(args="[--epochs, '2']")
    done = cli("submit", str(config), "--set", f"output_dir={tmp_path / 'elsewhere' / 'run'}", cwd=config.parent)
    assert done.returncode == 0, done.stderr
    job = re.search(r"Job (chatty-\S+): SUCCEEDED", done.stdout)
    assert job, done.stdout
    away = tmp_path / "away"
    away.mkdir()
    assert cli("status", job[1], cwd=away).returncode == 0  # the promise report keeps too
    report = cli("report", job[1], "--out", str(tmp_path / "report"), cwd=away)
    assert report.returncode == 0, report.stderr
    assert job[1] in (tmp_path / "report" / "report.html").read_text()
