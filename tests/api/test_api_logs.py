"""``Job.logs()`` yields the lines ``cloudtrain logs`` shows: start-up noise (DEBUG) held back unless
``debug``, the trainer's events rendered as the CLI renders them, or with ``events`` as they came with
``line.event`` parsed; a credential the job printed masked. Read from a local run's own record (its
``status.json`` and ``lines.jsonl``), through ``cloudtrain.attach`` as a user would."""

from __future__ import annotations

import json

import cloudtrain
from cloudtrain.cli import main
from cloudtrain.errors import ExitCode

LINES = [
    ("DEBUG", "2026-12-01 10:00:00.1: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on."),
    ("INFO", "loading data"),
    ("INFO", json.dumps({"event": "epoch", "epoch": 1, "epochs": 3, "loss": 0.412345678, "accuracy": 0.9})),
    ("INFO", json.dumps({"event": "metric", "name": "loss", "value": 0.412345678, "step": 1})),  # a repeat
    ("INFO", "token=ghp_" + "a" * 36),
    ("INFO", json.dumps({"event": "done", "val_accuracy": 0.98125, "wall_time_s": 17.71})),
]


def run_folder(tmp_path):
    folder = tmp_path / "cloudtrain-runs" / "logs-1"
    (folder / "local-run").mkdir(parents=True)
    status = {"job_id": "logs-1", "name": str(folder), "native_state": "succeeded", "details": {}}
    (folder / "local-run" / "status.json").write_text(json.dumps(status))
    stamp = "2026-12-01T10:00:00+00:00"
    with open(folder / "local-run" / "lines.jsonl", "w") as out:
        for severity, message in LINES:
            out.write(json.dumps({"timestamp": stamp, "replica": "chief", "message": message, "severity": severity}))
            out.write("\n")
    return folder


def test_logs_are_the_lines_the_cli_shows(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    folder = run_folder(tmp_path)
    job = cloudtrain.attach(str(folder))
    shown = [line.message for line in job.logs()]
    assert shown == [
        "loading data",
        "epoch 1/3  loss 0.4123  accuracy 0.9",
        "token=***",
        "done: val_accuracy 0.9812  wall_time_s 17.71",
    ]
    assert main(["logs", str(folder)]) == ExitCode.OK  # the CLI prints the same lines
    printed = [line.split(" | ", 1)[1] for line in capsys.readouterr().out.splitlines()]
    assert printed == shown


def test_debug_shows_the_start_up_noise_and_events_come_parsed(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    job = cloudtrain.attach(str(run_folder(tmp_path)))
    assert [line.severity for line in job.logs(debug=True)][0] == "DEBUG"
    lines = list(job.logs(events=True))
    events = [line.event for line in lines if line.event is not None]
    assert [e["event"] for e in events] == ["epoch", "metric", "done"]  # each as it came, the repeat too
    assert events[0]["loss"] == 0.412345678  # full values
    assert [line.message for line in lines if line.event is None] == ["loading data", "token=***"]
