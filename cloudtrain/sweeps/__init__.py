"""Hyperparameter sweeps: one ``sweep:`` key, three engines.

:mod:`.params` turns the config's parameters into typed, validated ranges (pure, offline);
each cloud backend renders its own tuning request from them (``backends/*/tuning.py``);
:mod:`.local` drives trials on this machine with Optuna; :mod:`.results` reads the trials
back as one table for every backend.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import TYPE_CHECKING

from cloudtrain.errors import UsageError
from cloudtrain.sweeps.params import METRIC_ENV

if TYPE_CHECKING:
    from cloudtrain.config.schema import Sweep
    from cloudtrain.spec import JobSpec


def sweep_of(spec: JobSpec) -> Sweep:
    """The ``sweep:`` section of a job that must have one (a sweep's drivers are only given such jobs)."""
    if spec.sweep is None:
        raise UsageError(f"{spec.config_file}: the config has no sweep: section", hint="see docs/how-to/sweeps.md")
    return spec.sweep


def trial_base(spec: JobSpec) -> JobSpec:
    """The job every trial runs: the sweep's spec, told which metric to report, no sweep of its own."""
    env = MappingProxyType({**spec.env, METRIC_ENV: sweep_of(spec).metric})
    return dataclasses.replace(spec, env=env, sweep=None)
