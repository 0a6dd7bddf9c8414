"""The run report of two real local runs (1 and 2 replicas), opened in headless Chromium with Playwright:
no console errors, every image loads, the tables hold the runs' own numbers. Also a sweep's report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cloudtrain.cli import main
from cloudtrain.text.numbers import measured

pytestmark = [pytest.mark.slow, pytest.mark.tf]
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _run(args: list[str], capsys) -> dict:
    assert main(args) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_report_of_two_real_runs_in_a_real_browser(tmp_path, monkeypatch, capsys) -> None:
    from playwright.sync_api import sync_playwright

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    config = str(ROOT / "job_configs" / "gpu4.yaml")
    for devices in (1, 2):  # MirroredStrategy over 1 and 2 logical CPUs: a real 1-vs-2 replica comparison
        args = [
            "submit",
            "--config",
            config,
            "--local",
            "--set",
            f"args=[--data=digits, --epochs=2, --cpu-devices={devices}]",
        ]
        assert main(args) == 0, capsys.readouterr().err
    capsys.readouterr()
    history = [json.loads(line) for line in (tmp_path / "cache" / "jobs.jsonl").read_text().splitlines()]
    ids = list(dict.fromkeys(h["job_id"] for h in history))  # a run's record, then its last state seen
    assert len(ids) == 2
    out = tmp_path / "report"
    written = _run(["report", *ids, "--out", str(out), "-o", "json"], capsys)
    assert set(written["figures"]) == {"timeline", "epochs", "throughput", "comparison"}
    assert all(Path(p).is_file() and Path(p).stat().st_size > 5000 for p in written["figures"].values())

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on(
            "request",
            lambda r: errors.append(f"network: {r.url}") if not r.url.startswith(("file:", "data:")) else None,
        )
        page.goto(Path(written["report"]).as_uri())
        assert errors == []
        images = page.eval_on_selector_all("img", "els => els.map(e => [e.id, e.complete && e.naturalWidth])")
        assert {i for i, _ in images} == {"fig-timeline", "fig-epochs", "fig-throughput", "fig-comparison"}
        assert all(width > 100 for _, width in images)
        page.screenshot(path=str(out / "screenshot.png"), full_page=True)
        runs = page.eval_on_selector_all("#runs tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))")
        header = page.eval_on_selector_all("#runs thead th", "cells => cells.map(c => c.innerText.trim())")
        phases = {}
        for job_id in ids:
            slug = "".join(c if c.isalnum() else "-" for c in job_id)
            phases[job_id] = page.eval_on_selector_all(
                f"#timeline-{slug} tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))"
            )
            epochs = page.eval_on_selector_all(
                f"#epochs-{slug} tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))"
            )
            assert [row[0] for row in epochs] == ["1", "2"]
        browser.close()

    assert [r[0] for r in runs] == ids and [r[header.index("replicas")] for r in runs] == ["1", "2"]
    # the page's numbers are the runs' own: each run's final val_accuracy is in its epoch table, and the
    # phases are those the follower saw (history), second for second
    for job_id in ids:
        saved = json.loads((tmp_path / "cache" / "runs" / f"{job_id}.json").read_text())
        assert [row[0] for row in phases[job_id]] == [p["phase"] for p in saved["timeline"]]
        assert [row[1] for row in phases[job_id]] == [measured(p["seconds"]) for p in saved["timeline"]]
        assert "training" in [p["phase"] for p in saved["timeline"]]
    speedups = [r[header.index("speed-up")] for r in runs]
    assert speedups[0] == "1×" and speedups[1].endswith("×")
