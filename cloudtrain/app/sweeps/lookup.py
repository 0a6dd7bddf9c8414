"""Find a sweep in this machine's history and read its trials, whichever engine ran it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from cloudtrain.app.sweeps import local
from cloudtrain.app.sweeps.owner import running_owner
from cloudtrain.backend_rules import Capability
from cloudtrain.backends import get_backend, parse_job_id
from cloudtrain.config import load_config
from cloudtrain.errors import CloudtrainError, UsageError
from cloudtrain.history import JobRecord, find
from cloudtrain.spec import build_spec
from cloudtrain.sweeps import results, sweep_of


def sweep_record(job_id: str) -> JobRecord:
    entry = find(job_id)
    if entry is None:
        entry = _by_another_id(job_id)
    if entry is None or getattr(entry, "kind", "job") != "sweep":
        raise UsageError(f"no sweep {job_id!r} in this machine's history", hint="see cloudtrain list")
    return entry


def _by_another_id(job_id: str) -> JobRecord | None:
    """The history record of a sweep found by another of its ids, which its backend knows (a Slurm sweep's
    later array, submitted by ``sweep resume``): the sweep's handle names the id history records."""
    found = parse_job_id(job_id)
    if found is None:
        return None
    name, short, location = found
    try:
        handle = get_backend(name).attach_sweep(short, **location)
    except CloudtrainError:  # no sweep of that backend's (a trial, a job): not found, said as for any id
        return None
    return find(handle.job_id) if handle.job_id != job_id else None


def load_results(job_id: str) -> results.SweepResults:
    """The results of the sweep ``job_id``, from its Optuna journal or its cloud."""
    entry = sweep_record(job_id)
    backend = get_backend(entry.backend)
    if Capability.SWEEPS_HERE in backend.capabilities:
        folder = Path(entry.name)
        state = local.read_state(folder)
        here = Capability.RUNS_HERE in backend.capabilities  # else its trials run as the config says (Kubernetes)
        spec = build_spec(load_config(state["config"], tuple(state["overrides"]), local=here))
        spec = dataclasses.replace(spec, job_name=state["job_name"], output_dir=str(folder))
        sweep = sweep_of(spec)
        study = local.open_study(folder, spec, create=False)  # a damaged journal: one StateError line
        unfinished = "RUNNING" if running_owner(folder) is not None else "STOPPED"  # a detached sweep's owner
        if study is None:  # killed before its first record, or its owner is starting: nothing to show yet
            return results.SweepResults(spec.job_name, sweep.metric, sweep.goal, unfinished, (), sweep.max_trials)
        counted = local.counted_trials(study)
        limit = getattr(sweep, "max_failed_trials", None)
        gave_up = limit is not None and unfinished != "RUNNING" and local.failed_trials(study) >= limit
        done = local.ended_state(study) if counted >= sweep.max_trials or gave_up else unfinished
        found = results.from_study(spec.job_name, study, sweep.metric, sweep.goal, sweep.max_trials, done)
        return dataclasses.replace(found, scales=_scales(sweep))
    table: results.SweepResults = backend.attach_sweep(
        entry.job_id, region=entry.region, project=entry.project
    ).results()
    return dataclasses.replace(table, scales=_scales_of_config(entry.config)) if entry.config else table


def _scales(sweep: Any) -> dict[str, str]:
    return {name: p.scale for name, p in sweep.params.items()}


def _scales_of_config(path: str) -> dict[str, str]:
    """The parameters' scales of the config a cloud sweep was submitted with, where it still reads (the charts'
    axes); {} when it does not (moved, edited into something else): the chart then judges by the values."""
    try:
        spec = build_spec(load_config(path, local=True))
    except CloudtrainError:
        return {}
    return _scales(spec.sweep) if spec.sweep is not None else {}
