"""Commands on existing jobs: status, logs, cancel, list.

They parse and print: a job is found and acted on through the Python API's :class:`cloudtrain.api.Job`
(:func:`cloudtrain.api.attach`) and the application layer, the same code a notebook runs."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, TypeVar

import click

from cloudtrain import api
from cloudtrain.app.locate import last_state, locate, states_now
from cloudtrain.backends import names
from cloudtrain.backends.base import LogLine
from cloudtrain.cli import sweep
from cloudtrain.cli._follow import follow as follow_job
from cloudtrain.cli._group import CONFIG_OPTION, DRAIN_OPTION, OUTPUT_OPTION, cli, debug_enabled
from cloudtrain.console import (
    ReplicaPrinter,
    flatten,
    line_dict,
    make_console,
    plain,
    print_json,
    print_kv,
    print_table,
)
from cloudtrain.errors import CloudtrainError
from cloudtrain.events import parse as parse_event
from cloudtrain.history import recent
from cloudtrain.interruptions import describe
from cloudtrain.numbers import measured
from cloudtrain.statefiles import StateError
from cloudtrain.timeline import human_seconds

F = TypeVar("F", bound=Callable[..., Any])


class _BackendChoice(click.Choice):
    """The registry's backends, read when the option is used (a backend may be registered after import)."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:  # click declares a plain attribute; this reads the registry
        return names()

    @choices.setter
    def choices(self, value: Any) -> None:
        pass


_JOB_OPTIONS = [
    click.option("--backend", type=_BackendChoice(), help="Default: from history."),
    click.option("--region", help="Default: from history or --config."),
    click.option("--project", help="Vertex project. Default: from history or --config."),
    CONFIG_OPTION,
]


def _job_options(func: F) -> F:
    for option in reversed(_JOB_OPTIONS):
        func = option(func)
    return func


def _attach(
    job_id: str, backend: str | None, region: str | None, project: str | None, config_path: str | None
) -> api.Job:
    """The job the flags point at: the API's own :func:`cloudtrain.api.attach`."""
    return api.attach(job_id, backend=backend, region=region, project=project, config=config_path)


@cli.command()
@click.argument("job_id", metavar="JOB")
@_job_options
@OUTPUT_OPTION
def status(
    job_id: str, backend: str | None, region: str | None, project: str | None, config_path: str | None, output: str
) -> None:
    """Show a job's state."""
    if sweep.sweep_entry(job_id) is not None:
        sweep.show_status(job_id, output)
        return
    report = _attach(job_id, backend, region, project, config_path).status_report()
    if output == "json":
        print_json(report.to_dict())
        return
    result, interrupted = report.status, report.interruptions
    rows = [(k, v) for k, v in result.to_dict().items() if k != "details"]
    details = {k: v for k, v in result.details.items() if k != "spot_interruptions"}
    rows += flatten(details) + flatten({"cost": report.cost or {}})
    if interrupted:
        rows.append(("interruptions", describe(interrupted)))
        rows += [(f"interruption {n}", _interruption_line(item)) for n, item in enumerate(interrupted["items"], 1)]
    print_kv(make_console(), f"Job {result.job_id}", rows)


def _interruption_line(item: dict[str, Any]) -> str:
    parts = [f"{item['at'] or '?'} ({item['source']})"]
    if item.get("step") is not None:
        parts.append(f"at step {item['step']:,}")
    if item.get("resume_step") is not None:
        parts.append(f"resumed from step {item['resume_step']:,}")
    elif item.get("checkpoint_step") is not None:
        parts.append(f"checkpoint at step {item['checkpoint_step']:,}")
    if item.get("steps_redone") is not None:
        parts.append(
            f"{item['steps_redone']:,} steps to redo"
            if item.get("resumed_at") is None
            else f"{item['steps_redone']:,} steps redone"
        )
    if item.get("seconds_lost") is not None:
        parts.append(f"{human_seconds(item['seconds_lost'])} lost")
    return ", ".join(parts)


@cli.command()
@click.argument("job_id", metavar="JOB")
@click.option("--follow", "-f", is_flag=True, help="Keep streaming until the job ends.")
@DRAIN_OPTION
@_job_options
@OUTPUT_OPTION
def logs(
    job_id: str,
    follow: bool,
    drain: float | None,
    backend: str | None,
    region: str | None,
    project: str | None,
    config_path: str | None,
    output: str,
) -> None:
    """Print a job's logs; with --follow, stream until it ends and exit with its outcome.

    Without --follow it reads everything the cloud holds, late lines included."""
    if sweep.sweep_entry(job_id) is not None:
        sweep.show_logs(job_id, output)
        return
    job = _attach(job_id, backend, region, project, config_path)
    if output == "json":  # JSON Lines: each line with its own time and severity, start-up noise included

        def show_json(line: LogLine) -> None:
            record = {**line_dict(line), "message": plain(line.message)}
            event = parse_event(line.message)
            if event is not None:  # the trainer's progress, parsed: what the live line shows on a terminal
                record["event"] = event
            click.echo(json.dumps(record))

        if follow:  # stdout stays JSON Lines; the summary goes to stderr and the exit code is the job's outcome
            follow_job(
                make_console(sys.stderr),
                job.handle,
                cancel_on_interrupt=False,
                live=False,
                drain=drain,
                show_line=show_json,
            )
            return
        for line in job.logs(follow=False):
            show_json(line)
        return
    console = make_console()
    if follow:
        follow_job(console, job.handle, cancel_on_interrupt=False, debug=debug_enabled(), drain=drain)
        return
    printer = ReplicaPrinter(console, show_debug=debug_enabled())
    for line in job.logs(follow=False):
        printer(line)


@cli.command()
@click.argument("job_id", metavar="JOB")
@click.option("--wait/--no-wait", default=True, show_default=True, help="Wait until the cancel has taken effect.")
@_job_options
@OUTPUT_OPTION
def cancel(
    job_id: str,
    wait: bool,
    backend: str | None,
    region: str | None,
    project: str | None,
    config_path: str | None,
    output: str,
) -> None:
    """Cancel (stop) a job."""
    if sweep.local_sweep_entry(job_id) is not None:
        sweep.stop_local(job_id, wait=wait, output=output)
        return
    result = _attach(job_id, backend, region, project, config_path).cancel(wait=wait)
    if output == "json":
        print_json(result.to_dict())
    else:
        make_console().print(f"Job {result.job_id}: {result.state.value}")


@cli.command(name="list")
@click.option("--limit", default=20, show_default=True)
@_job_options
@OUTPUT_OPTION
def list_jobs(
    limit: int, backend: str | None, region: str | None, project: str | None, config_path: str | None, output: str
) -> None:
    """Recent jobs from this machine's history, every backend; with --backend and --region (or
    --config), the cloud's own list for that region (jobs submitted from anywhere)."""
    if not config_path and not (backend and region):
        _list_history(limit, backend, region, output)
        return
    where = locate(None, backend, region, project, config_path)
    jobs = where.backend.list_jobs(region=where.region, project=where.project, limit=limit)
    if output == "json":
        print_json([j.to_dict() for j in jobs])
        return
    extra = where.backend.list_columns  # the backend's own columns (Slurm: cluster, partition, nodes)
    print_table(
        make_console(),
        ["job", "state", *extra, "created", "message"],
        [(j.job_id, j.state.value, *(j.details.get(k) or "" for k in extra), j.created, j.message) for j in jobs],
        id_columns=["job"],
    )


def _list_history(limit: int, backend: str | None, region: str | None, output: str) -> None:
    entries = recent(limit, backend=backend, region=region)
    now = states_now(entries)  # one call per cluster where a backend reads many jobs at once
    jobs = [asdict(e) | {"state": now.get(e.job_id) or last_state(e)} for e in entries]
    for job in jobs:
        if job.get("kind") == "sweep":  # a sweep's line says where it stands: trials done, the best so far
            job["state"] = _sweep_state(job["job_id"]) or job["state"]
    if output == "json":
        print_json(jobs)
        return
    if not jobs:
        click.echo("no jobs in this machine's history" + (" for these flags" if backend or region else ""), err=True)
        return
    print_table(
        make_console(),
        ["job", "kind", "backend", "region", "state", "created", "name"],
        [
            (
                j["job_id"],
                j.get("kind") or "job",
                j["backend"],
                j["region"],
                j["state"] or "",
                (j["created"] or "")[:19],
                j["name"],
            )
            for j in jobs
        ],
        id_columns=["job"],
    )


def _sweep_state(job_id: str) -> str | None:
    """``SUCCEEDED: 8/8 trials, best val_accuracy=0.9811 (trial 5)``; UNKNOWN (and one warning) when its
    state files are damaged; None when it cannot be read now (a cloud out of reach)."""
    try:
        table = sweep.load_results(job_id)
    except StateError as exc:
        click.echo(f"warning: {exc}", err=True)
        return "UNKNOWN"
    except CloudtrainError:
        return None
    done = sum(n for state, n in table.counts().items() if state in ("COMPLETE", "PRUNED", "FAIL"))
    best = table.best
    text = f"{table.state}: {done}/{table.max_trials or '?'} trials"
    return text + (f", best {table.metric}={measured(best.value)} (trial {best.trial})" if best else "")
