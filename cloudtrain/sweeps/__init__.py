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

from cloudtrain.sweeps.params import METRIC_ENV

if TYPE_CHECKING:
    from cloudtrain.spec import JobSpec


def trial_base(spec: JobSpec) -> JobSpec:
    """The job every trial runs: the sweep's spec, told which metric to report, no sweep of its own."""
    assert spec.sweep is not None
    env = MappingProxyType({**spec.env, METRIC_ENV: spec.sweep.metric})
    return dataclasses.replace(spec, env=env, sweep=None)
