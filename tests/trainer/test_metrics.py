"""A sweep trial's metric: the event line every platform can read, and cloudml-hypertune's file on Vertex."""

from __future__ import annotations

import json

from trainer import metrics
from trainer.events import parse_events


def test_no_sweep_no_report(capsys) -> None:
    metrics.report_epoch({"val_accuracy": 0.9}, 1, environ={})
    assert capsys.readouterr().out == ""


def test_a_trial_prints_the_metric_event_each_epoch(capsys) -> None:
    env = {metrics.METRIC_ENV: "val_accuracy"}
    metrics.report_epoch({"loss": 0.3, "val_accuracy": 0.91}, 2, environ=env)
    assert parse_events(capsys.readouterr().out) == [
        {"event": "metric", "name": "val_accuracy", "value": 0.91, "step": 2}
    ]


def test_an_unknown_metric_is_one_warning(capsys) -> None:
    metrics.report_epoch({"loss": 0.3, "val_accuracy": 0.91}, 2, environ={metrics.METRIC_ENV: "f1"})
    out, err = capsys.readouterr()
    assert out == "" and "'f1' is not one this trainer reports (loss, val_accuracy)" in err


def test_on_vertex_hypertune_writes_where_the_tuning_service_reads(tmp_path, monkeypatch, capsys) -> None:
    target = tmp_path / "hypertune" / "output.metrics"
    monkeypatch.setenv("CLOUD_ML_HP_METRIC_FILE", str(target))  # hypertune reads it at construction
    monkeypatch.setattr(metrics, "_hypertune", None)
    env = {metrics.METRIC_ENV: "val_accuracy", "CLOUD_ML_TRIAL_ID": "7", "CLOUD_ML_HP_METRIC_FILE": str(target)}
    metrics.report_epoch({"val_accuracy": 0.8}, 1, environ=env)
    metrics.report_epoch({"val_accuracy": 0.85}, 2, environ=env)
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert [(d["val_accuracy"], d["global_step"]) for d in lines] == [("0.8", "1"), ("0.85", "2")]
    assert len(parse_events(capsys.readouterr().out)) == 2
