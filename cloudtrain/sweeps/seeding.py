"""A seeded sampler whose trial N draws from its own stream, seeded from (seed, N), so a resumed sweep picks what an
uninterrupted one would have. Not for the grid, whose seed fixes the order ``grid_id`` refers to."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from optuna.samplers import BaseSampler


def trial_seed(seed: int, number: int) -> int:
    """A distinct 32-bit seed per (sweep seed, trial number)."""
    return (seed * 1_000_003 + number) % 2**32


class PerTrialSeedSampler(BaseSampler):
    """Delegates to ``make(trial_seed(seed, trial.number))``, one per thread (Optuna runs a trial's hooks in it)."""

    def __init__(self, make: Callable[[int], BaseSampler], seed: int):
        self._make, self._seed = make, seed
        self._local = threading.local()

    def _inner(self) -> BaseSampler:
        inner = getattr(self._local, "sampler", None)
        if inner is None:  # hooks before any before_trial (Optuna does not do this today)
            inner = self._local.sampler = self._make(self._seed)
        return inner

    def before_trial(self, study: Any, trial: Any) -> None:
        self._local.sampler = self._make(trial_seed(self._seed, trial.number))
        self._local.sampler.before_trial(study, trial)

    def infer_relative_search_space(self, study: Any, trial: Any) -> dict[str, Any]:
        return self._inner().infer_relative_search_space(study, trial)

    def sample_relative(self, study: Any, trial: Any, search_space: dict[str, Any]) -> dict[str, Any]:
        return self._inner().sample_relative(study, trial, search_space)

    def sample_independent(self, study: Any, trial: Any, param_name: str, param_distribution: Any) -> Any:
        return self._inner().sample_independent(study, trial, param_name, param_distribution)

    def after_trial(self, study: Any, trial: Any, state: Any, values: Any) -> None:
        self._inner().after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        self._inner().reseed_rng()
