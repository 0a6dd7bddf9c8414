"""``goal: minimize`` on every backend, each scale in both clouds' requests, and the best trial by the goal."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.backends.vertex import VertexBackend
from cloudtrain.config.schema import SweepParam
from cloudtrain.sweeps import results
from cloudtrain.sweeps.results import SweepResults, TrialRow
from tests.backends.vertex.conftest import make_package
from tests.sweeps.test_sweep_driver import ScriptedBackend, _run
from tests.sweeps.test_sweep_driver import _spec as local_spec
from tests.sweeps.test_sweep_requests import SAGEMAKER, _spec

PARAMS = (
    "sweep.params={lr: {min: 0.0001, max: 0.1, scale: log}, momentum: {min: 0.5, max: 0.99, "
    "scale: reverse_log}, dropout: {min: 0.1, max: 0.4}, layers: {min: 2, max: 6, scale: linear}}"
)


def test_vertex_minimize_and_every_scale(tmp_path: Path) -> None:
    body = VertexBackend().render(_spec("sweep.goal=minimize", "sweep.metric=val_loss", PARAMS), make_package(tmp_path))
    study = body["studySpec"]
    assert study["metrics"] == [{"metricId": "val_loss", "goal": "MINIMIZE"}]
    params = {p["parameterId"]: p for p in study["parameters"]}
    assert params["lr"]["scaleType"] == "UNIT_LOG_SCALE"
    assert params["momentum"] == {
        "parameterId": "momentum",
        "doubleValueSpec": {"minValue": 0.5, "maxValue": 0.99},
        "scaleType": "UNIT_REVERSE_LOG_SCALE",
    }
    assert params["dropout"]["scaleType"] == "UNIT_LINEAR_SCALE"  # no scale given: linear
    assert params["layers"] == {
        "parameterId": "layers",
        "integerValueSpec": {"minValue": "2", "maxValue": "6"},
        "scaleType": "UNIT_LINEAR_SCALE",
    }


def test_sagemaker_minimize_and_every_scale(tmp_path: Path) -> None:
    params = SageMakerBackend().render(
        _spec(*SAGEMAKER, "sweep.goal=minimize", "sweep.metric=val_loss", PARAMS), make_package(tmp_path)
    )
    config = params["HyperParameterTuningJobConfig"]
    assert config["HyperParameterTuningJobObjective"] == {"Type": "Minimize", "MetricName": "val_loss"}
    ranges = config["ParameterRanges"]
    assert {
        r["Name"]: (r["MinValue"], r["MaxValue"], r["ScalingType"]) for r in ranges["ContinuousParameterRanges"]
    } == {
        "lr": ("0.0001", "0.1", "Logarithmic"),
        "momentum": ("0.5", "0.99", "ReverseLogarithmic"),
        "dropout": ("0.1", "0.4", "Linear"),
    }
    assert ranges["IntegerParameterRanges"] == [
        {"Name": "layers", "MinValue": "2", "MaxValue": "6", "ScalingType": "Linear"}
    ]


@pytest.mark.parametrize(("goal", "best_lr"), [("minimize", 0.001), ("maximize", 0.1)])
def test_a_local_sweep_studies_in_the_goals_direction_and_its_best_follows_it(tmp_path: Path, goal, best_lr) -> None:
    spec = local_spec(tmp_path, algorithm="grid", max_trials=3, parallel_trials=1, goal=goal)
    assert spec.sweep is not None
    spec = dataclasses.replace(
        spec, sweep=spec.sweep.model_copy(update={"params": {"lr": SweepParam(values=[0.01, 0.001, 0.1])}})
    )
    study, _ = _run(spec, ScriptedBackend(lambda lr, epoch: lr))  # the metric is the trial's lr
    assert study.direction.name == goal.upper()
    assert study.best_trial.params == {"lr": best_lr}
    table = results.from_study("s", study, "val_accuracy", goal, 3, "SUCCEEDED")
    assert table.best is not None
    assert (table.best.params, table.to_dict()["best_value"]) == ({"lr": best_lr}, best_lr)


def rows(*trials: tuple[str, str, float | None]) -> tuple[TrialRow, ...]:
    return tuple(TrialRow(trial, state, value) for trial, state, value in trials)


def test_the_best_trial_is_by_the_goal_among_completed_trials_only() -> None:
    trials = rows(
        ("0", "COMPLETE", 0.5),
        ("1", "COMPLETE", 0.2),
        ("2", "FAIL", 0.01),
        ("3", "PRUNED", 0.9),
        ("4", "COMPLETE", 0.7),
        ("5", "RUNNING", None),
        ("6", "COMPLETE", None),
    )
    best_low = SweepResults("s", "val_loss", "minimize", "RUNNING", trials).best
    best_high = SweepResults("s", "val_accuracy", "maximize", "RUNNING", trials).best
    assert best_low is not None and best_low.trial == "1"
    assert best_high is not None and best_high.trial == "4"
    assert SweepResults("s", "m", "maximize", "RUNNING", rows(("0", "FAIL", 1.0))).best is None
    summary = SweepResults("s", "val_loss", "minimize", "RUNNING", trials, 8).to_dict()
    assert (summary["best_trial"], summary["best_value"], summary["max_trials"]) == ("1", 0.2, 8)
    assert SweepResults("s", "m", "minimize", "RUNNING", trials).counts() == {
        "COMPLETE": 4,
        "FAIL": 1,
        "PRUNED": 1,
        "RUNNING": 1,
    }


def test_vertex_early_stopping_and_max_failed_trials_are_sent_as_set(tmp_path: Path) -> None:
    body = VertexBackend().render(
        _spec("sweep.early_stopping=true", "sweep.max_failed_trials=3"), make_package(tmp_path)
    )
    assert body["studySpec"]["medianAutomatedStoppingSpec"] == {"useElapsedDuration": False}  # by steps, not time
    assert body["maxFailedTrialCount"] == 3
    plain = VertexBackend().render(_spec(), make_package(tmp_path))
    assert "medianAutomatedStoppingSpec" not in plain["studySpec"] and "maxFailedTrialCount" not in plain


def test_sagemaker_early_stopping_and_seed_are_sent_as_set(tmp_path: Path) -> None:
    config = SageMakerBackend().render(
        _spec(*SAGEMAKER, "sweep.early_stopping=true", "sweep.seed=11"), make_package(tmp_path)
    )["HyperParameterTuningJobConfig"]
    assert (config["TrainingJobEarlyStoppingType"], config["RandomSeed"]) == ("Auto", 11)
    plain = SageMakerBackend().render(_spec(*SAGEMAKER), make_package(tmp_path))["HyperParameterTuningJobConfig"]
    assert plain["TrainingJobEarlyStoppingType"] == "Off" and "RandomSeed" not in plain


@pytest.mark.parametrize(
    ("job_name", "prefix"),
    [
        ("mnist-sweep-20261123-101010", "mnist-sweep-20261123-10"),  # cut to 32 with "-" and 8 hex
        ("my_sweep.v2", "my-sweep-v2"),  # what SageMaker's name rule refuses becomes "-"
        ("--lead-and-trail--", "lead-and-trail"),
        ("abcdefghijklmnopqrstuv-wxyz", "abcdefghijklmnopqrstuv"),  # the cut lands after a "-": no "--"
        ("___", ""),  # nothing left: the digest alone
        ("Xylo-X", "Xylo-X"),  # capitals kept, and an X is not a "-" to strip
        ("_" + "a" * 30, "a" * 23),  # refused characters at the start are dropped before the cut
    ],
)
def test_tuning_job_names_are_the_prefix_and_8_hex_of_the_whole_name(job_name, prefix) -> None:
    import hashlib

    from cloudtrain.backends.sagemaker.tuning import tuning_job_name

    digest = hashlib.sha256(job_name.encode()).hexdigest()[:8]
    assert tuning_job_name(job_name) == (f"{prefix}-{digest}" if prefix else digest)


def test_sagemaker_tags_go_on_the_tuning_job_not_its_training_definition(tmp_path: Path) -> None:
    request = SageMakerBackend().render(_spec(*SAGEMAKER, "labels={team: vision}"), make_package(tmp_path))
    assert {"Key": "team", "Value": "vision"} in request["Tags"]
    assert "Tags" not in request["TrainingJobDefinition"]
