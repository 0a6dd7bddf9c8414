"""A local sweep of the real trainer: Optuna picks, each trial is a local run (tests/sweeps/test_sweep_killed.py:
a killed sweep resumes)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from cloudtrain.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.tf]
ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, trials: int, parallel: int) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(
        textwrap.dedent(f"""
        name: lr-sweep
        backend: local
        region: us-central1
        machine: {{type: n1-standard-4}}
        package: {{path: {ROOT / "trainer"}, module: trainer.task}}
        args: [--data=digits, --epochs=1, --batch-size=64]
        sweep:
          metric: val_accuracy
          max_trials: {trials}
          parallel_trials: {parallel}
          algorithm: random
          seed: 3
          params:
            lr: {{min: 0.0001, max: 0.3, scale: log}}
        """)
    )
    return path


def test_a_local_sweep_of_four_trials_finds_the_best_and_prints_the_table(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["submit", "-c", str(_config(tmp_path, 4, 2)), "-o", "json"]) == 0
    table = json.loads(capsys.readouterr().out)
    trials = table["trials"]
    assert len(trials) == 4 and all(t["state"] == "COMPLETE" for t in trials)
    assert len({t["params"]["lr"] for t in trials}) == 4
    best = max(trials, key=lambda t: t["value"])
    assert table["best_trial"] == best["trial"] and table["best_value"] == best["value"]
    # each trial is a normal local run: its own folder, status and history record
    for t in trials:
        status = json.loads(
            Path(
                tmp_path,
                "cloudtrain-runs",
                table["sweep_id"],
                f"trial-{int(t['trial']):03d}",
                "local-run",
                "status.json",
            ).read_text()
        )
        assert status["state"] == "SUCCEEDED" and f"--lr={t['params']['lr']}" in " ".join(
            json.loads(Path(status["details"]["logs_dir"], "replicas.json").read_text())[0]["argv"]
        )
    history = [json.loads(line) for line in (tmp_path / "cache" / "jobs.jsonl").read_text().splitlines()]
    assert sorted(h["kind"] for h in history) == ["sweep", "trial", "trial", "trial", "trial"]
    # and the results command reads the same study back
    assert main(["sweep", "results", table["sweep_id"], "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["best_value"] == best["value"]
    # status and logs understand a sweep: trials by state, the best so far, every trial's lines tagged
    assert main(["status", table["sweep_id"], "-o", "json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["trials"] == {"COMPLETE": 4} and status["best_params"] == best["params"]
    assert main(["logs", table["sweep_id"], "-o", "json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {line["trial"] for line in lines} == {"0", "1", "2", "3"}
    assert sum('"event": "metric"' in line["message"] for line in lines) == 4  # one epoch per trial
    assert main(["list", "-o", "json"]) == 0
    listed = {j["job_id"]: j for j in json.loads(capsys.readouterr().out)}
    assert listed[table["sweep_id"]]["kind"] == "sweep"
    assert listed[table["sweep_id"]]["state"].startswith("SUCCEEDED: 4/4 trials, best val_accuracy=")
