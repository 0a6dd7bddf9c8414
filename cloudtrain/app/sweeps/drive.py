"""Start, run and resume a sweep (a config with ``sweep:``) as a local study or the cloud's tuning job; never prints."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

from cloudtrain import creation_window
from cloudtrain.app.launch import check_secrets_exist
from cloudtrain.app.prepare import Prepared, build_package, load_spec
from cloudtrain.app.sweeps import local
from cloudtrain.app.sweeps import owner as sweep_owner
from cloudtrain.app.sweeps.lookup import load_results, sweep_record
from cloudtrain.backend_rules import Capability
from cloudtrain.backends import LOCAL, get_backend
from cloudtrain.backends.base import Backend, JobHandle, JobStatus, LogLine, SweepHandle
from cloudtrain.errors import UsageError
from cloudtrain.history import JobRecord, record
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec
from cloudtrain.sweeps import journal, results, sweep_of


@dataclass(frozen=True)
class StartedSweep:
    """A local sweep's folder (its trials run with :func:`run_local`), or a cloud tuning job's handle."""

    sweep_id: str
    folder: Path | None = None
    handle: SweepHandle | None = None
    first: JobStatus | None = None


def start(prepared: Prepared, *, backend_of: Callable[[str], Backend] = get_backend) -> StartedSweep:
    """Create the sweep and record it in history; a local one's trials are not run yet."""
    check_secrets_exist(prepared.spec)
    spec, config = prepared.spec, str(Path(prepared.loaded.file).resolve())
    backend = backend_of(spec.backend)
    if Capability.SWEEPS_HERE in backend.facts.capabilities:
        folder = local.sweep_dir_of(spec)
        local.write_state(
            folder,
            config=config,
            overrides=prepared.overrides,
            job_name=spec.job_name,
            created=spec.created.isoformat(),
        )
        record(JobRecord(spec.job_name, str(folder), spec.backend, spec.region, None, config, kind="sweep"))
        return StartedSweep(spec.job_name, folder=folder)
    # A ``sweep:`` spec is its cloud's tuning job; a Ctrl-C while it is created is held until it is in history.
    with creation_window.window() as held:
        handle = cast(SweepHandle, backend.submit(spec, prepared.package))
        first = handle.status()
        record(JobRecord(handle.job_id, first.name, spec.backend, spec.region, spec.project, config, kind="sweep"))
        started = StartedSweep(handle.job_id, handle=handle, first=first)
    if held.caught:
        raise creation_window.CreatedThenInterrupted(started)
    return started


def stop_local(job_id: str, *, wait: bool) -> results.SweepResults:
    """Stop a detached local sweep as Ctrl-C stops an attached one; its results after. A local sweep
    with no process running it (ended, stopped, or attached to a terminal) is left as it is."""
    entry = sweep_record(job_id)
    sweep_owner.stop(Path(entry.name), wait=wait)
    return load_results(job_id)


def run_local(
    spec: JobSpec,
    package: BuiltPackage | None,
    *,
    on_event: Callable[[local.TrialEvent], None],
    backend: Backend | None = None,
) -> results.SweepResults:
    """Run a local sweep's trials (each recorded in history) to the end; its results table."""

    def remember(handle: JobHandle, trial_spec: JobSpec) -> None:
        record(
            JobRecord(
                handle.job_id,
                str(trial_spec.output_dir),  # the trial's own folder: its handle's output_dir
                trial_spec.backend,  # local, or the cluster whose jobs the trials are (Kubernetes)
                trial_spec.region,
                None if trial_spec.backend == LOCAL else trial_spec.project,
                str(trial_spec.config_file),
                kind="trial",
            )
        )

    folder = local.sweep_dir_of(spec)
    owner = sweep_owner.running_owner(folder)
    if owner is not None and owner != os.getpid():  # a detached owner runs as itself: its own pid was claimed
        raise UsageError(
            f"sweep {spec.job_name} is running (pid {owner}); two processes must not run one sweep's trials",
            hint=f"wait for it, or stop it first: cloudtrain cancel {spec.job_name}",
        )
    sweep_owner.claim(folder)
    try:
        study = local.run_trials(
            spec, package, backend=backend or get_backend(spec.backend), on_event=on_event, remember=remember
        )
    except local.SweepStopped:  # the journal keeps the stopped trials RUNNING; the caller sees Ctrl-C as ever
        raise KeyboardInterrupt from None
    finally:
        sweep_owner.release(folder)
    sweep = sweep_of(spec)
    state = local.ended_state(study)  # every trial failed: FAILED, never SUCCEEDED
    return results.from_study(spec.job_name, study, sweep.metric, sweep.goal, sweep.max_trials, state)


def resume_remote(job_id: str) -> SweepHandle | None:
    """A sweep whose backend runs its trials away from this machine and resumes it on request (Slurm's job
    arrays: ``resume_sweep``): its handle once the rest of its trials are submitted; None for any other."""
    entry = sweep_record(job_id)
    backend = get_backend(entry.backend)
    resume = getattr(backend, "resume_sweep", None)
    if Capability.SWEEPS_HERE in backend.facts.capabilities or resume is None:
        return None
    with creation_window.window() as held:  # the new array is recorded in the sweep's folder before Ctrl-C acts
        handle = cast(SweepHandle, resume(entry.job_id, region=entry.region, project=entry.project))
    if held.caught:
        raise creation_window.CreatedThenInterrupted(handle)
    return handle


def resumable(job_id: str) -> tuple[JobSpec, BuiltPackage | None, str]:
    """A stopped local sweep's spec and package, and its folder: finished trials are kept."""
    entry = sweep_record(job_id)
    capabilities = get_backend(entry.backend).facts.capabilities
    if Capability.SWEEPS_HERE not in capabilities:
        raise UsageError(
            f"sweep {job_id} runs on {entry.backend}; the cloud resumes its own sweeps",
            hint=f"see cloudtrain sweep results {job_id}",
        )
    state = local.read_state(Path(entry.name))
    damage = journal.damage(Path(entry.name) / journal.NAME)  # before anything is built
    if damage is not None:
        raise damage.error()
    here = Capability.RUNS_HERE in capabilities  # else its trials run as the config says, under its output_dir
    _, spec = load_spec(state["config"], tuple(state["overrides"]), local=here)
    created = dt.datetime.fromisoformat(state["created"])
    spec = dataclasses.replace(
        spec, job_name=state["job_name"], output_dir=entry.name if here else spec.output_dir, created=created
    )
    return spec, build_package(spec), entry.name


class SweepView(Protocol):
    """Who is told what driving a sweep does (the CLI prints each; nothing here does)."""

    def started_here(self, spec: JobSpec, folder: Path) -> None:
        """A local sweep's folder is made; its trials run next (or in a process of their own)."""

    def handed_over(self, spec: JobSpec, pid: int, log: Path) -> None:
        """``--detach``: process ``pid`` runs the trials, writing to ``log``."""

    def created(self, handle: SweepHandle, first: JobStatus) -> None:
        """A cloud tuning job exists."""

    def trial(self, event: local.TrialEvent) -> None:
        """A local trial started, ended or was requeued."""

    def line(self, line: LogLine) -> None:
        """A line of a cloud sweep's trials (a Slurm array's: ``tNNN/<replica>``)."""

    def resumed_here(self, spec: JobSpec, folder: str) -> None:
        """``sweep resume``: a local sweep's trials go on in ``folder``."""

    def resumed_elsewhere(self, sweep_id: str) -> None:
        """``sweep resume``: a sweep run elsewhere (Slurm) had its interrupted and remaining trials submitted."""


class SweepInterrupted(Exception):
    """Ctrl-C while a sweep ran here (finished trials kept, it resumes) or was followed (a cloud sweep runs on)."""

    def __init__(self, sweep_id: str, *, local: bool, just: str | None = None) -> None:
        super().__init__(f"sweep {sweep_id} interrupted")
        #: "created" / "resumed": the Ctrl-C came while its job (array) was submitted; it is recorded and runs
        self.sweep_id, self.local, self.just = sweep_id, local, just


@dataclass(frozen=True)
class SweepEnd:
    """A sweep that ended: its results table, and a cloud sweep's final status (None for a local one)."""

    results: results.SweepResults
    status: JobStatus | None = None


def drive(prepared: Prepared, view: SweepView, *, detach: bool, cancel_on_interrupt: bool = False) -> SweepEnd | None:
    """``submit`` of a ``sweep:`` config: start it, run its trials here or follow the cloud's to the end; None when
    ``detach``. Ctrl-C: :class:`SweepInterrupted`, or with ``cancel_on_interrupt`` a cloud sweep cancelled."""
    spec = prepared.spec
    try:
        started = start(prepared)
    except creation_window.CreatedThenInterrupted as interrupted:  # recorded before the Ctrl-C acts
        started = interrupted.created
        if detach or not cancel_on_interrupt or started.handle is None:
            raise SweepInterrupted(started.sweep_id, local=False, just="created") from None
        started.handle.cancel()
    if started.folder is not None:
        view.started_here(spec, started.folder)
        if detach:
            pid = sweep_owner.hand_over(started.folder, started.sweep_id)  # a process of its own runs the trials
            view.handed_over(spec, pid, started.folder / sweep_owner.LOG)
            return None
        return run_here(spec, prepared.package, view)
    handle, first = started.handle, started.first
    if handle is None or first is None:  # start() gives a cloud sweep both
        raise ValueError(f"sweep {started.sweep_id} has neither a folder nor a handle")
    view.created(handle, first)
    return None if detach else follow_sweep(handle, view, cancel=cancel_on_interrupt)


def run_here(spec: JobSpec, package: BuiltPackage | None, view: SweepView) -> SweepEnd:
    """A local sweep's trials to the end (:func:`run_local`), each told to ``view``."""
    try:
        return SweepEnd(run_local(spec, package, on_event=view.trial))
    except KeyboardInterrupt:
        raise SweepInterrupted(spec.job_name, local=True) from None


def follow_sweep(handle: SweepHandle, view: SweepView, *, cancel: bool = False) -> SweepEnd:
    """Until a cloud sweep ends (its trials' lines to ``view``, where the handle gives them); its table.
    Ctrl-C: :class:`SweepInterrupted`; with ``cancel``, the sweep cancelled to its end."""
    try:
        if getattr(handle, "shows_trials", False):
            for line in handle.logs(follow=True):
                view.line(line)
        status = handle.wait()
    except KeyboardInterrupt:
        if not cancel:
            raise SweepInterrupted(handle.job_id, local=False) from None
        handle.cancel()
        status = handle.wait()
    return SweepEnd(handle.results(), status)


def resume(job_id: str, view: SweepView) -> SweepEnd:
    """``sweep resume``: run a stopped sweep's remaining trials to its end. Ctrl-C: :class:`SweepInterrupted`."""
    try:
        handle = resume_remote(job_id)
    except creation_window.CreatedThenInterrupted:  # the new array is in the sweep's folder
        raise SweepInterrupted(job_id, local=False, just="resumed") from None
    if handle is not None:
        view.resumed_elsewhere(job_id)
        return follow_sweep(handle, view)
    spec, package, folder = resumable(job_id)
    view.resumed_here(spec, folder)
    return run_here(spec, package, view)
