"""Runs grouped by the config's ``experiment:``: which jobs of this machine's history belong to one."""

from __future__ import annotations

from cloudtrain import history
from cloudtrain.errors import UsageError


def experiment_jobs(name: str) -> list[str]:
    """The ids of the jobs (not sweeps) recorded under experiment ``name``, oldest first; one line when none."""
    found = [e.job_id for e in reversed(history.recent(10**9, experiment=name)) if e.kind != "sweep"]
    if not found:
        known = sorted({e.experiment for e in history.recent(10**9) if e.experiment})
        hint = f"experiments in this machine's history: {', '.join(known)}" if known else "set experiment: in a config"
        raise UsageError(f"no jobs of experiment {name!r} in this machine's history", hint=hint)
    return found
