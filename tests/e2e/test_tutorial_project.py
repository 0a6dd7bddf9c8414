"""The tutorial's project (docs/tutorial/first-job.md) runs with --local as the page says: the data
channel reaches the code at $SM_CHANNEL_TRAIN, it learns, the model lands where Vertex keeps it, and
`cloudtrain report` of that run writes its report."""

from __future__ import annotations

import html
import re
import shutil
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
    page = (tmp_path / "report" / "report.html").read_text()
    assert job[1] in page
    _check_epochs_and_throughput(page, job[1], float(accuracy[1]))
    _check_tensorboard_shows_the_curve(job[1], tmp_path)


def _check_tensorboard_shows_the_curve(job_id: str, tmp_path) -> None:
    """Step 7 of the tutorial: `cloudtrain tensorboard JOB`, opened in Chromium (the system one, as the other
    browser tests), draws the loss curve the trainer's one TensorBoard callback wrote."""
    from playwright.sync_api import sync_playwright

    import cloudtrain
    from tests.fakes.gcs import free_port

    with cloudtrain.tensorboard([job_id], port=free_port()) as board:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(board.url + "#timeseries")
            page.get_by_text("epoch_loss").first.wait_for(timeout=90_000)
            cards = page.locator("scalar-card-component, card-view").count()
            page.screenshot(path=str(tmp_path / "tensorboard.png"), full_page=True)
            browser.close()
    assert cards >= 1


def _table(page: str, css_id: str) -> tuple[list[str], list[list[str]]]:
    """The columns and rows of the report's table ``css_id``, as the page shows them."""
    found = re.search(rf'<table id="{re.escape(css_id)}"><thead><tr>(.*?)</tr></thead><tbody>(.*?)</tbody>', page)
    assert found, f"no table {css_id} in the report"
    columns = [html.unescape(c) for c in re.findall(r"<th>(.*?)</th>", found[1])]
    rows = [
        [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", found[2])
    ]
    return columns, rows


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _check_epochs_and_throughput(page: str, job_id: str, final_accuracy: float) -> None:
    """The tutorial's one event line per epoch fills the report: 40 epochs with their metrics, and the
    examples/s the run's summary row shows is the median of the epochs after the first (issue 40)."""
    columns, rows = _table(page, "epochs-" + "".join(c if c.isalnum() else "-" for c in job_id))
    assert columns == ["epoch", "loss", "accuracy", "val_loss", "val_accuracy", "examples_per_sec", "epoch_time_s"]
    assert [int(r[0]) for r in rows] == list(range(1, 41))
    by = {name: [_number(r[i]) for r in rows] for i, name in enumerate(columns)}
    assert by["val_accuracy"][-1] == pytest.approx(final_accuracy, abs=1e-3)  # the same number as the summary's
    assert by["loss"][-1] < by["loss"][0]  # it learned
    for rate, seconds in zip(by["examples_per_sec"], by["epoch_time_s"], strict=True):
        assert rate * seconds == pytest.approx(320, rel=2e-3)  # 400 points less the 20 % kept for validation
    summary_columns, summary = _table(page, "runs")
    row = dict(zip(summary_columns, summary[0], strict=True))
    after_first = sorted(by["examples_per_sec"][1:])
    assert row["epochs"] == "40" and _number(row["examples/s"]) == after_first[len(after_first) // 2]
