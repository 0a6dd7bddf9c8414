"""Sweep → tuning requests, checked with the clouds' own validators; the 32-character name; the metric regex."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.backends.sagemaker.tuning import MAX_TUNING_JOB_NAME, tuning_job_name
from cloudtrain.backends.vertex import VertexBackend
from cloudtrain.backends.vertex.request import render_custom_job
from cloudtrain.config.load import load_config
from cloudtrain.spec import build_spec
from cloudtrain.sweeps.params import METRIC_ENV, metric_regex
from tests.backends.vertex.conftest import make_package

ROOT = Path(__file__).resolve().parents[2]
SAGEMAKER = [
    "backend=sagemaker",
    "region=us-east-1",
    "staging_bucket=s3://my-bucket",
    "machine.type=ml.g4dn.xlarge",
    "machine.accelerator=null",
    "machine.accelerator_count=0",
    "project=null",
    "role_arn=arn:aws:iam::123456789012:role/SageMakerRole",
]


def _spec(*overrides: str):
    return build_spec(load_config(ROOT / "job_configs" / "sweep.yaml", overrides))


def test_vertex_request_is_a_valid_hyperparameter_tuning_job(tmp_path: Path) -> None:
    from google.cloud.aiplatform_v1.types import HyperparameterTuningJob

    spec, package = _spec(), make_package(tmp_path)
    body = VertexBackend().render(spec, package)
    message = HyperparameterTuningJob.from_json(json.dumps(body), ignore_unknown_fields=False)
    assert json.loads(HyperparameterTuningJob.to_json(message)).keys() >= body.keys()
    assert body["maxTrialCount"] == 8 and body["parallelTrialCount"] == 2
    study = body["studySpec"]
    assert study["metrics"] == [{"metricId": "val_accuracy", "goal": "MAXIMIZE"}]
    assert "algorithm" not in study  # ALGORITHM_UNSPECIFIED, the proto default: Vertex's Bayesian optimisation
    params = {p["parameterId"]: p for p in study["parameters"]}
    assert params["lr"] == {
        "parameterId": "lr",
        "doubleValueSpec": {"minValue": 0.0001, "maxValue": 0.1},
        "scaleType": "UNIT_LOG_SCALE",
    }
    # whole-number discrete values go as strings, so a trial gets --batch-size=64, not 64.0
    assert params["batch-size"]["categoricalValueSpec"] == {"values": ["32", "64", "128"]}
    assert params["optimizer"]["categoricalValueSpec"] == {"values": ["adam", "sgd"]}
    # the trial job is the CustomJob of one run, told which metric to report
    one_run = render_custom_job(dataclasses.replace(spec, sweep=None), package)["jobSpec"]
    trial = body["trialJobSpec"]
    python = trial["workerPoolSpecs"][0]["pythonPackageSpec"]
    assert {"name": METRIC_ENV, "value": "val_accuracy"} in python["env"]
    python["env"].remove({"name": METRIC_ENV, "value": "val_accuracy"})
    if not python["env"]:
        del python["env"]
    assert trial == one_run


def test_vertex_integer_and_discrete_parameters(tmp_path: Path) -> None:
    from google.cloud.aiplatform_v1.types import HyperparameterTuningJob

    spec = _spec(
        "sweep.params={layers: {min: 1, max: 4}, drop: {values: [0.1, 0.5]}}",
        "sweep.algorithm=grid",
        "sweep.early_stopping=true",
    )
    body = VertexBackend().render(spec, make_package(tmp_path))
    HyperparameterTuningJob.from_json(json.dumps(body), ignore_unknown_fields=False)
    params = {p["parameterId"]: p for p in body["studySpec"]["parameters"]}
    assert params["layers"]["integerValueSpec"] == {"minValue": "1", "maxValue": "4"}
    assert params["drop"]["discreteValueSpec"] == {"values": [0.1, 0.5]}
    assert body["studySpec"]["algorithm"] == "GRID_SEARCH"
    assert "medianAutomatedStoppingSpec" in body["studySpec"]


def _tuning_shape():
    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    return model.operation_model("CreateHyperParameterTuningJob").input_shape


def test_sagemaker_request_passes_botocore_validation(tmp_path: Path) -> None:
    from botocore.validate import validate_parameters

    from tests.backends.sagemaker.test_sagemaker_request import _strict

    spec = _spec(*SAGEMAKER)
    params = SageMakerBackend().render(spec, make_package(tmp_path))
    validate_parameters(params, _tuning_shape())
    assert _strict(_tuning_shape(), params) == []
    config = params["HyperParameterTuningJobConfig"]
    assert config["Strategy"] == "Bayesian" and config["ResourceLimits"] == {
        "MaxParallelTrainingJobs": 2,
        "MaxNumberOfTrainingJobs": 8,
    }
    assert config["HyperParameterTuningJobObjective"] == {"Type": "Maximize", "MetricName": "val_accuracy"}
    ranges = config["ParameterRanges"]
    assert ranges["ContinuousParameterRanges"] == [
        {"Name": "lr", "MinValue": "0.0001", "MaxValue": "0.1", "ScalingType": "Logarithmic"}
    ]
    assert {r["Name"]: r["Values"] for r in ranges["CategoricalParameterRanges"]} == {
        "batch-size": ["32", "64", "128"],
        "optimizer": ["adam", "sgd"],
    }
    definition = params["TrainingJobDefinition"]
    assert definition["Environment"][METRIC_ENV] == "val_accuracy"
    assert json.loads(definition["StaticHyperParameters"]["cloudtrain_module"]) == "trainer.task"
    assert definition["AlgorithmSpecification"]["MetricDefinitions"] == [
        {"Name": "val_accuracy", "Regex": metric_regex("val_accuracy")}
    ]


def test_sagemaker_grid_lists_integer_ranges_value_by_value(tmp_path: Path) -> None:
    from botocore.validate import validate_parameters

    spec = _spec(
        *SAGEMAKER, "sweep.params={layers: {min: 1, max: 3}, opt: {values: [adam, sgd]}}", "sweep.algorithm=grid"
    )
    params = SageMakerBackend().render(spec, make_package(tmp_path))
    validate_parameters(params, _tuning_shape())
    config = params["HyperParameterTuningJobConfig"]
    assert config["Strategy"] == "Grid" and "MaxNumberOfTrainingJobs" not in config["ResourceLimits"]
    assert config["ParameterRanges"] == {
        "CategoricalParameterRanges": [
            {"Name": "layers", "Values": ["1", "2", "3"]},
            {"Name": "opt", "Values": ["adam", "sgd"]},
        ]
    }


@pytest.mark.parametrize(
    "job_name",
    ["mnist-sweep-20261123-101010", "a" * 63 + "-20261123-101010", "x", "under_score.and.dots-20261123-101010-ab12"],
)
def test_tuning_job_names_keep_sagemakers_32_character_limit(job_name: str) -> None:
    name = tuning_job_name(job_name)
    assert len(name) <= MAX_TUNING_JOB_NAME
    assert re.fullmatch(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,31}", name)
    assert tuning_job_name(job_name) == name  # pure: the dry run shows what submit sends


def test_two_submits_a_second_apart_get_different_tuning_job_names() -> None:
    first = tuning_job_name("a-very-long-sweep-name-that-is-cut-20261123-101010")
    second = tuning_job_name("a-very-long-sweep-name-that-is-cut-20261123-101011")
    assert first != second and first[:23] == second[:23]


@pytest.mark.parametrize("metric", ["val_accuracy", "training/hptuning/metric", "loss (train)"])
def test_the_sagemaker_regex_reads_the_trainers_metric_line(metric: str) -> None:
    from trainer.events import format_event

    for value in (0.9876, 1e-05, -3.5, 12):
        line = "[1,algo-1]<stdout>:" + format_event("metric", name=metric, value=value, step=3)
        match = re.search(metric_regex(metric), line)
        assert match and float(match.group(1)) == pytest.approx(value)
    other = format_event("metric", name=metric + "_other", value=0.5, step=1)
    assert re.search(metric_regex(metric), other) is None
