"""``cloudtrain sweep results|resume``, and the submit path of a config with ``sweep:``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import click

from cloudtrain.app.prepare import Prepared
from cloudtrain.app.sweeps import drive as app_sweep
from cloudtrain.app.sweeps.local import TrialEvent
from cloudtrain.app.sweeps.lookup import load_results, sweep_record
from cloudtrain.backend_rules import Capability
from cloudtrain.backends import get_backend
from cloudtrain.backends.base import JobStatus, LogLine, SweepHandle
from cloudtrain.cli._group import JOB_ID, OUTPUT_OPTION, cli
from cloudtrain.console import (
    Console,
    ReplicaPrinter,
    counted,
    flatten,
    make_console,
    print_json,
    print_kv,
    print_table,
)
from cloudtrain.errors import ExitCode
from cloudtrain.history import JobRecord, find
from cloudtrain.spec import JobSpec
from cloudtrain.statefiles import StateError
from cloudtrain.sweeps import sweep_of
from cloudtrain.sweeps.results import SweepResults
from cloudtrain.text.numbers import measured


def submit_sweep(console: Console, prepared: Prepared, *, detach: bool, output: str, cancel: bool = False) -> None:
    """Run (locally) or create (in the cloud) the sweep of ``prepared``; exit like the CLI's table says."""
    _ended(console, lambda view: app_sweep.drive(prepared, view, detach=detach, cancel_on_interrupt=cancel), output)


class _SweepPrinter:
    """What driving a sweep tells (:class:`cloudtrain.app.sweeps.drive.SweepView`), as the CLI prints it."""

    def __init__(self, console: Console, *, detached: bool = False) -> None:
        self.console, self.detached, self.metric = console, detached, ""
        self._printer: ReplicaPrinter | None = None

    def started_here(self, spec: JobSpec, folder: Path) -> None:
        sweep = sweep_of(spec)
        self.metric = sweep.metric
        self.console.print(
            f"[bold]Sweep[/bold] {spec.job_name} started: {counted(sweep.max_trials, 'trial')}, "
            f"{sweep.parallel_trials} at a time, {sweep.algorithm}; folder {folder}"
        )

    def handed_over(self, spec: JobSpec, pid: int, log: Path) -> None:
        self.console.print(f"  runs detached (pid {pid}); its output: {log}")
        _print_commands(self.console, spec.job_name)

    def created(self, handle: SweepHandle, first: JobStatus) -> None:
        self.console.print(
            f"[bold]Sweep[/bold] {handle.job_id} created" + (f": {first.console_url}" if first.console_url else "")
        )
        _print_commands(self.console, handle.job_id)

    def resumed_elsewhere(self, sweep_id: str) -> None:
        self.console.print(f"[bold]Sweep[/bold] {sweep_id} resumed: its interrupted and remaining trials are submitted")
        _print_commands(self.console, sweep_id)

    def resumed_here(self, spec: JobSpec, folder: str) -> None:
        self.metric = sweep_of(spec).metric
        how = f"runs detached (pid {os.getpid()}) in" if self.detached else "resumed from"
        self.console.print(f"[bold]Sweep[/bold] {spec.job_name} {how} {folder}")

    def trial(self, event: TrialEvent) -> None:
        if event.state == "requeued":
            self.console.print(f"[yellow]{event.message}[/yellow]")
            return
        params = " ".join(f"{k}={measured(v)}" for k, v in event.params.items())
        value = "" if event.value is None else f" {self.metric}={measured(event.value)}"
        tail = f" ({event.message})" if event.message else ""
        self.console.print(f"trial {event.number:>3} {event.state.lower():<8} {params}{value}{tail}")

    def line(self, line: LogLine) -> None:
        self._printer = self._printer or ReplicaPrinter(self.console)
        self._printer(line)


def _ended(
    console: Console, drive: Callable[[_SweepPrinter], app_sweep.SweepEnd | None], output: str, **how: bool
) -> None:
    """Drive a sweep through the app layer, printing what it tells; its table at the end and the exit code:
    a local sweep with no finished trial fails, a cloud sweep exits with its state's code."""
    view = _SweepPrinter(console, **how)
    try:
        end = drive(view)
    except app_sweep.SweepInterrupted as stopped:
        if stopped.just == "created":
            console.print(f"[bold]Sweep[/bold] {stopped.sweep_id} created")
            _print_commands(console, stopped.sweep_id)
        elif stopped.just == "resumed":
            view.resumed_elsewhere(stopped.sweep_id)
        if stopped.local:
            console.print(f"\n[yellow]Sweep {stopped.sweep_id} stopped; finished trials are kept.[/yellow]")
            console.print(f"  resume:  cloudtrain sweep resume {stopped.sweep_id}")
        else:
            console.print(f"\n[yellow]Detached; sweep {stopped.sweep_id} keeps running.[/yellow]")
        raise SystemExit(ExitCode.INTERRUPTED) from None
    if end is None:  # detached
        return
    table, status = end.results, end.status
    _show(console, table, output)
    if status is None:
        if table.best is None:
            raise SystemExit(ExitCode.JOB_FAILED)
        return
    if status.message and status.state.exit_code and output != "json":  # why it ended so, and what next
        console.print(status.message)
    if status.state.exit_code:
        raise SystemExit(status.state.exit_code)


def _print_commands(console: Console, sweep_id: str) -> None:
    console.print(f"  trials:  cloudtrain sweep results {sweep_id}")
    console.print(f"  cancel:  cloudtrain cancel {sweep_id}")


def _show(console: Console | None, table: SweepResults, output: str) -> None:
    if output == "json":
        print_json(table.to_dict())
        return
    best = table.best
    params = sorted({k for t in table.trials for k in t.params})
    print_table(
        make_console() if console is None else console,
        ["trial", "state", table.metric, *params, "job"],
        [
            (
                ("★ " if best is t else "") + t.trial,
                t.state,
                "-" if t.value is None else measured(t.value),
                *(measured(t.params[p]) if p in t.params else "-" for p in params),
                t.job_id or "-",
            )
            for t in table.trials
        ],
        title=f"sweep {table.sweep_id}: {table.state}, goal {table.goal} {table.metric}",
        id_columns=["job"],
    )
    if best is not None:
        click.echo(
            f"best: trial {best.trial}, {table.metric}={measured(best.value)}, "
            + " ".join(f"--{k}={measured(v)}" for k, v in best.params.items())
            + " (full precision: -o json)",
            err=output == "json",
        )


@cli.group()
def sweep() -> None:
    """Hyperparameter sweeps: their trials and results."""


@sweep.command()
@click.argument("job_id", metavar="SWEEP", type=JOB_ID)
@OUTPUT_OPTION
def results(job_id: str, output: str) -> None:
    """The trials of a sweep, best marked (local, Vertex AI or SageMaker)."""
    console = make_console(sys.stderr if output == "json" else None)
    _show(console, load_results(job_id), output)


@sweep.command()
@click.argument("job_id", metavar="SWEEP", type=JOB_ID)
@OUTPUT_OPTION
@click.option("--detached", is_flag=True, hidden=True, help="Run as the owner of a detached sweep (submit --detach).")
def resume(job_id: str, output: str, detached: bool) -> None:
    """Continue a sweep that was stopped (local or Slurm): finished trials are kept, interrupted ones rerun."""
    console = make_console(sys.stderr if output == "json" else None)
    _ended(console, lambda view: app_sweep.resume(job_id, view), output, detached=detached)


def sweep_entry(job_id: str) -> JobRecord | None:
    """The history record of ``job_id`` when it is a sweep, else None (status and logs ask first)."""
    entry = find(job_id)
    return entry if entry is not None and getattr(entry, "kind", "job") == "sweep" else None


def local_sweep_entry(job_id: str) -> JobRecord | None:
    """The history record of ``job_id`` when it is a sweep run on this machine, else None."""
    entry = sweep_entry(job_id)
    return (
        entry if entry is not None and Capability.SWEEPS_HERE in get_backend(entry.backend).facts.capabilities else None
    )


def stop_local(job_id: str, *, wait: bool, output: str) -> None:
    """``cloudtrain cancel SWEEP`` of a local sweep: its owner stops as on Ctrl-C; finished trials are kept."""
    table = app_sweep.stop_local(job_id, wait=wait)
    _print_status(table, output)
    if output != "json" and table.state == "STOPPED":
        make_console().print(f"  resume:  cloudtrain sweep resume {job_id}")


def show_status(job_id: str, output: str) -> None:
    """``cloudtrain status SWEEP``: the sweep's state, its trials by state, the best so far."""
    _print_status(load_results(job_id), output)


def _print_status(table: SweepResults, output: str) -> None:
    best = table.best
    summary = {
        "sweep_id": table.sweep_id,
        "state": table.state,
        "metric": table.metric,
        "goal": table.goal,
        "trials": table.counts(),
        "max_trials": table.max_trials,
        "best_trial": best.trial if best else None,
        "best_value": best.value if best else None,
        "best_params": best.params if best else None,
    }
    if output == "json":
        print_json(summary)
        return
    rows = flatten({k: v for k, v in summary.items() if k not in ("sweep_id", "best_params", "trials")})
    rows.insert(1, ("trials", ", ".join(f"{n} {s.lower()}" for s, n in table.counts().items()) or "none yet"))
    if best:
        rows.append(("best params", " ".join(f"--{k}={v}" for k, v in best.params.items())))
    print_kv(make_console(), f"Sweep {table.sweep_id}", rows)


def show_logs(job_id: str, output: str) -> None:
    """``cloudtrain logs SWEEP``: a local sweep's trials one after the other, each line tagged with its
    trial; a cloud sweep's trials are cloud jobs of their own, listed with the command for each."""
    entry = sweep_record(job_id)
    table = load_results(job_id)
    # a cloud's tuning job: its trials are jobs of their own
    if Capability.SWEEPS_HERE not in get_backend(entry.backend).facts.capabilities:
        handle = get_backend(entry.backend).attach_sweep(entry.job_id, region=entry.region, project=entry.project)
        if getattr(handle, "shows_trials", False):  # a Slurm array: each trial's lines, labelled tNNN/<replica>
            printer = ReplicaPrinter(make_console())
            for line in handle.logs(follow=False):
                if output != "json":
                    printer(line)
                    continue
                trial, replica = line.replica.split("/", 1)
                _echo_trial_line(line, str(int(trial[1:])), replica)
            return
        for t in table.trials:
            click.echo(
                f"trial {t.trial} ({t.state}): cloudtrain logs {t.job_id} --backend {entry.backend} "
                f"--region {entry.region}"
            )
        return
    printer = ReplicaPrinter(make_console())
    backend = get_backend(entry.backend)  # the sweep's own backend runs its trials here: each is one of its runs
    for t in table.trials:
        trial = str(Path(entry.name, f"trial-{int(t.trial):03d}"))
        if backend.parse_job_id(trial) is None:  # not started, or its record is gone
            continue
        try:
            for line in backend.attach(trial).logs():
                tagged = type(line)(line.timestamp, f"t{int(t.trial):03d}/{line.replica}", line.message, line.severity)
                if output == "json":
                    _echo_trial_line(line, t.trial, line.replica)
                else:
                    printer(tagged)
        except StateError as exc:  # a trial's damaged status is that trial's: the others' lines still show
            click.echo(f"warning: {exc}", err=True)


def _echo_trial_line(line: LogLine, trial: str, replica: str) -> None:
    """One JSON Lines record of a sweep's ``logs -o json``: the line, tagged with its trial."""
    record = {
        "timestamp": line.timestamp.isoformat(),
        "trial": trial,
        "replica": replica,
        "severity": line.severity,
        "message": line.message,
    }
    click.echo(json.dumps(record))
