"""TensorBoard's scalars page for two runs, opened in headless Chromium (the system one, as the run report's
browser test): both runs by their job names, each run's scalar tags drawn, no error on the page."""

from __future__ import annotations

import shutil

import pytest

import cloudtrain
from tests.fakes.events import local_run, write_scalars
from tests.fakes.gcs import free_port

pytestmark = [pytest.mark.slow, pytest.mark.server]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_the_scalars_page_shows_both_runs_by_their_job_names(tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    first = local_run(tmp_path / "runs", "digits-1gpu")
    second = local_run(tmp_path / "runs", "digits-4gpu")
    write_scalars(first / "logs", {"epoch_loss": [0.9, 0.6, 0.4]})
    write_scalars(second / "logs", {"epoch_loss": [0.8, 0.5, 0.3], "epoch_accuracy": [0.7, 0.8, 0.9]})
    with cloudtrain.tensorboard(["digits-1gpu", "digits-4gpu"], port=free_port()) as board:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(board.url + "#timeseries")
            page.get_by_text("digits-4gpu").first.wait_for(timeout=60_000)
            runs = page.get_by_text("digits-1gpu").count() + page.get_by_text("digits-4gpu").count()
            page.get_by_text("epoch_accuracy").first.wait_for(timeout=60_000)
            cards = page.locator("scalar-card-component, card-view").count()
            page.screenshot(path=str(tmp_path / "tensorboard.png"), full_page=True)
            browser.close()
    assert errors == []
    assert runs >= 2
    assert cards >= 2  # epoch_loss (both runs) and epoch_accuracy drawn
