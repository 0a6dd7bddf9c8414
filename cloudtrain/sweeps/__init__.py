"""Hyperparameter sweeps: one ``sweep:`` key, three engines: :mod:`.params` (typed ranges), each cloud backend's
``tuning.py``, and the local Optuna driver; :mod:`.results` reads any backend's trials as one table."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

from cloudtrain.errors import UsageError
from cloudtrain.sweeps.params import METRIC_ENV


class _Sweep(Protocol):
    @property
    def metric(self) -> str: ...


SweepT = TypeVar("SweepT", bound=_Sweep, covariant=True)


class Swept(Protocol[SweepT]):
    """What the sweep drivers read of a :class:`~cloudtrain.spec.JobSpec`, by shape: this folder imports no spec."""

    @property
    def sweep(self) -> SweepT | None: ...
    @property
    def env(self) -> Mapping[str, str]: ...
    @property
    def config_file(self) -> Path: ...


def sweep_of(spec: Swept[SweepT]) -> SweepT:
    """The ``sweep:`` section of a job that must have one (a sweep's drivers are only given such jobs)."""
    if spec.sweep is None:
        raise UsageError(f"{spec.config_file}: the config has no sweep: section", hint="see docs/how-to/sweeps.md")
    return spec.sweep


SpecT = TypeVar("SpecT", bound=Swept[Any])


def trial_base(spec: SpecT) -> SpecT:
    """The job every trial runs: the sweep's spec, told which metric to report, no sweep of its own."""
    env = MappingProxyType({**spec.env, METRIC_ENV: sweep_of(spec).metric})
    return dataclasses.replace(spec, env=env, sweep=None)  # type: ignore[type-var]  # a JobSpec: a dataclass
