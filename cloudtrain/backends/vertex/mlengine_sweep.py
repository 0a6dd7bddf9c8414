"""ML Engine's ``trainingInput.hyperparameters`` (HyperparameterSpec) → cloudtrain's ``sweep:``.

Key for key (``hyperparameterMetricTag`` → ``metric``, ML Engine's default tag when absent; an unspecified
``algorithm`` meant Bayesian; each ``params`` entry by its type), snake_case read as gcloud read it.
``resumePreviousJobId`` has no equivalent and is refused."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cloudtrain.sweeps.params import (
    LEGACY_ALGORITHMS,
    LEGACY_DEFAULT_METRIC,
    LEGACY_GOALS,
    LEGACY_SCALES,
    LEGACY_TYPES,
)

Fail = Callable[[str, str | None, str], Exception]


def _camel(data: Any) -> Any:
    if isinstance(data, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), str(k)): _camel(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_camel(v) for v in data]
    return data


def convert_hyperparameters(raw: Any, fail: Fail) -> dict[str, Any]:
    """The ``sweep`` mapping; ``fail(message, key, hint)`` builds the error for ``trainingInput.KEY``."""
    key = "hyperparameters"
    if not isinstance(raw, dict):
        raise fail("hyperparameters must be a mapping (HyperparameterSpec)", key, "see job_configs/legacy-sweep.yaml")
    spec = _camel(raw)
    known = {
        "goal",
        "params",
        "maxTrials",
        "maxParallelTrials",
        "maxFailedTrials",
        "hyperparameterMetricTag",
        "enableTrialEarlyStopping",
        "algorithm",
        "resumePreviousJobId",
    }
    for name in spec:
        if name not in known:
            raise fail(f"unknown hyperparameters key {name!r}", key, f"allowed: {', '.join(sorted(known))}")
    if spec.get("resumePreviousJobId"):
        raise fail(
            "resumePreviousJobId has no equivalent: each sweep starts its own study",
            key,
            "remove it (a local sweep resumes with `cloudtrain sweep resume JOB`)",
        )
    goal = str(spec.get("goal", "")).upper()
    if goal not in LEGACY_GOALS:
        raise fail(
            f"hyperparameters.goal must be MAXIMIZE or MINIMIZE, got {spec.get('goal')!r}", key, "add goal: MAXIMIZE"
        )
    algorithm = str(spec.get("algorithm", "ALGORITHM_UNSPECIFIED")).upper()
    if algorithm not in LEGACY_ALGORITHMS:
        raise fail(
            f"hyperparameters.algorithm {algorithm!r} is unknown", key, f"use one of {', '.join(LEGACY_ALGORITHMS)}"
        )
    sweep: dict[str, Any] = {
        "metric": spec.get("hyperparameterMetricTag") or LEGACY_DEFAULT_METRIC,
        "goal": LEGACY_GOALS[goal],
        "algorithm": LEGACY_ALGORITHMS[algorithm],
        "params": {},
    }
    for legacy_key, new_key in (
        ("maxTrials", "max_trials"),
        ("maxParallelTrials", "parallel_trials"),
        ("maxFailedTrials", "max_failed_trials"),
        ("enableTrialEarlyStopping", "early_stopping"),
    ):
        if legacy_key in spec:
            sweep[new_key] = spec[legacy_key]
    params = spec.get("params")
    if not isinstance(params, list) or not params:
        raise fail("hyperparameters.params must be a non-empty list", key, "add params: [{parameterName: lr, …}]")
    for i, entry in enumerate(params):
        sweep["params"].update(_param(entry, i, fail))
    return sweep


def _param(entry: Any, index: int, fail: Fail) -> dict[str, Any]:
    key = "hyperparameters"
    where = f"hyperparameters.params[{index}]"
    if not isinstance(entry, dict) or not entry.get("parameterName"):
        raise fail(f"{where} needs parameterName", key, "e.g. {parameterName: lr, type: DOUBLE, minValue: 0.001, …}")
    kind = str(entry.get("type", "")).upper()
    if kind not in LEGACY_TYPES:
        raise fail(
            f"{where}.type must be one of {', '.join(LEGACY_TYPES)}, got {entry.get('type')!r}", key, "add type: DOUBLE"
        )
    scale = str(entry.get("scaleType", "NONE")).upper()
    if scale not in LEGACY_SCALES:
        raise fail(f"{where}.scaleType {scale!r} is unknown", key, f"use one of {', '.join(LEGACY_SCALES)}")
    out: dict[str, Any] = {"type": LEGACY_TYPES[kind]}
    if kind in ("DOUBLE", "INTEGER"):
        out.update(min=entry.get("minValue"), max=entry.get("maxValue"))
        if LEGACY_SCALES[scale] != "linear":
            out["scale"] = LEGACY_SCALES[scale]
    else:
        values = entry.get("discreteValues" if kind == "DISCRETE" else "categoricalValues")
        out["values"] = values
    return {str(entry["parameterName"]): out}
