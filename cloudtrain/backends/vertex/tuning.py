"""JobSpec with a sweep → Vertex AI ``HyperparameterTuningJob`` request (REST JSON). Pure.

The trial job spec is exactly the ``CustomJob.jobSpec`` that :func:`render_custom_job`
builds for one run; Vertex appends ``--<parameterId>=<value>`` to each trial's args, and
the trainer reports the metric through cloudml-hypertune (trainer/metrics.py)."""

from __future__ import annotations

from typing import Any

from cloudtrain.backends.vertex.request import render_custom_job
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec
from cloudtrain.sweeps import trial_base
from cloudtrain.sweeps.params import Param, resolve

ALGORITHMS = {"bayesian": "ALGORITHM_UNSPECIFIED", "grid": "GRID_SEARCH", "random": "RANDOM_SEARCH"}
SCALES = {"linear": "UNIT_LINEAR_SCALE", "log": "UNIT_LOG_SCALE", "reverse_log": "UNIT_REVERSE_LOG_SCALE"}


def render_tuning_job(spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
    """The body of ``projects.locations.hyperparameterTuningJobs.create``."""
    sweep = spec.sweep
    assert sweep is not None, "render_tuning_job needs a spec with a sweep"
    trial = render_custom_job(trial_base(spec), package)
    study: dict[str, Any] = {
        "metrics": [{"metricId": sweep.metric, "goal": sweep.goal.upper()}],
        "parameters": [parameter_spec(p) for p in resolve(sweep.params, sweep.algorithm)],
    }
    if sweep.algorithm != "bayesian":  # ALGORITHM_UNSPECIFIED (the proto default, omitted) is Bayesian
        study["algorithm"] = ALGORITHMS[sweep.algorithm]
    if sweep.early_stopping:
        study["medianAutomatedStoppingSpec"] = {"useElapsedDuration": False}
    body: dict[str, Any] = {
        "displayName": spec.job_name,
        "studySpec": study,
        "maxTrialCount": sweep.max_trials,
        "parallelTrialCount": sweep.parallel_trials,
        "trialJobSpec": trial["jobSpec"],
        "labels": trial["labels"],
    }
    if sweep.max_failed_trials is not None:
        body["maxFailedTrialCount"] = sweep.max_failed_trials
    return body


def parameter_spec(param: Param) -> dict[str, Any]:
    out: dict[str, Any] = {"parameterId": param.name}
    if param.kind == "double":
        out["doubleValueSpec"] = {"minValue": param.min, "maxValue": param.max}
    elif param.kind == "integer":
        out["integerValueSpec"] = {"minValue": str(param.min), "maxValue": str(param.max)}  # int64: strings
    elif param.kind == "discrete" and not all(isinstance(v, int) for v in param.values):
        out["discreteValueSpec"] = {"values": [float(v) for v in param.values]}
    elif param.kind == "discrete":
        # Whole numbers go as categorical strings: a discrete double would be --batch-size=32.0, which int refuses
        out["categoricalValueSpec"] = {"values": [str(v) for v in param.values]}
    else:
        out["categoricalValueSpec"] = {"values": list(param.values)}
    if param.kind in ("double", "integer"):
        out["scaleType"] = SCALES[param.scale]
    return out
