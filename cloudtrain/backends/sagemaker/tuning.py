"""JobSpec with a sweep → ``CreateHyperParameterTuningJob`` parameters. Pure, no boto3.

The training job definition is one run's ``CreateTrainingJob`` request (:mod:`.request`); SageMaker adds each
trial's values to the hyperparameters file and the launcher passes them on as ``--name=value``; the objective is read
from the metric event line by regex. Tuning-job names are at most 32 characters (neither botocore nor moto checks):
:func:`tuning_job_name` derives a short, unique one."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from cloudtrain.backends.sagemaker.request import create_training_job
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec
from cloudtrain.sweeps import trial_base
from cloudtrain.sweeps.params import Param, metric_regex, resolve

MAX_TUNING_JOB_NAME = 32
STRATEGIES = {"bayesian": "Bayesian", "grid": "Grid", "random": "Random"}
SCALES = {"linear": "Linear", "log": "Logarithmic", "reverse_log": "ReverseLogarithmic"}
_NAME_RULE = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,31}$")


def tuning_job_name(job_name: str) -> str:
    """``<prefix>-<8 hex of the full job name>``, at most 32 characters, SageMaker's name rule."""
    digest = hashlib.sha256(job_name.encode()).hexdigest()[:8]
    prefix = re.sub(r"[^a-zA-Z0-9]+", "-", job_name).strip("-")[: MAX_TUNING_JOB_NAME - len(digest) - 1].strip("-")
    name = f"{prefix}-{digest}" if prefix else digest
    assert _NAME_RULE.match(name) and len(name) <= MAX_TUNING_JOB_NAME, name
    return name


def create_tuning_job(spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
    """The keyword arguments of ``sagemaker.create_hyper_parameter_tuning_job``, JSON-ready."""
    sweep = spec.sweep
    assert sweep is not None, "create_tuning_job needs a spec with a sweep"
    training = create_training_job(trial_base(spec), package)
    definition = {k: v for k, v in training.items() if k not in ("TrainingJobName", "HyperParameters", "Tags")}
    definition["StaticHyperParameters"] = training["HyperParameters"]
    definition["AlgorithmSpecification"] = {
        **training["AlgorithmSpecification"],
        "MetricDefinitions": [{"Name": sweep.metric, "Regex": metric_regex(sweep.metric)}],
    }
    params = resolve(sweep.params, sweep.algorithm)
    limits = {"MaxParallelTrainingJobs": sweep.parallel_trials}
    if sweep.algorithm != "grid":  # a grid's size is the number of its points
        limits["MaxNumberOfTrainingJobs"] = sweep.max_trials
    config: dict[str, Any] = {
        "Strategy": STRATEGIES[sweep.algorithm],
        "HyperParameterTuningJobObjective": {"Type": sweep.goal.capitalize(), "MetricName": sweep.metric},
        "ResourceLimits": limits,
        "ParameterRanges": parameter_ranges(params, grid=sweep.algorithm == "grid"),
        "TrainingJobEarlyStoppingType": "Auto" if sweep.early_stopping else "Off",
    }
    if sweep.seed is not None:
        config["RandomSeed"] = sweep.seed
    request: dict[str, Any] = {
        "HyperParameterTuningJobName": tuning_job_name(spec.job_name),
        "HyperParameterTuningJobConfig": config,
        "TrainingJobDefinition": definition,
    }
    if "Tags" in training:
        request["Tags"] = training["Tags"]
    return request


def parameter_ranges(params: list[Param], *, grid: bool) -> dict[str, list[dict[str, Any]]]:
    """Discrete numbers become categorical strings (SageMaker has no discrete type); a grid takes only
    categorical parameters, so its integer ranges are listed value by value."""
    ranges: dict[str, list[dict[str, Any]]] = {
        "IntegerParameterRanges": [],
        "ContinuousParameterRanges": [],
        "CategoricalParameterRanges": [],
    }
    for p in params:
        if p.kind in ("double", "integer") and not grid:
            key = "ContinuousParameterRanges" if p.kind == "double" else "IntegerParameterRanges"
            ranges[key].append(
                {"Name": p.name, "MinValue": str(p.min), "MaxValue": str(p.max), "ScalingType": SCALES[p.scale]}
            )
        else:
            ranges["CategoricalParameterRanges"].append({"Name": p.name, "Values": [str(v) for v in p.grid_values()]})
    return {k: v for k, v in ranges.items() if v}
