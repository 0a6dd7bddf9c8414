"""Commands on existing jobs: status, logs, cancel; they parse and print, through :class:`cloudtrain.api.Job`."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from cloudtrain import api, backends
from cloudtrain.backends.base import LogLine
from cloudtrain.cli import sweep
from cloudtrain.cli._follow import follow as follow_job
from cloudtrain.cli._group import DRAIN_OPTION, JOB_ID, OUTPUT_OPTION, cli, debug_enabled
from cloudtrain.cli._group import job_options as _job_options
from cloudtrain.console import (
    ReplicaPrinter,
    flatten,
    line_dict,
    make_console,
    plain,
    print_json,
    print_kv,
)
from cloudtrain.following.events import parse as parse_event
from cloudtrain.following.interruptions import describe
from cloudtrain.following.timeline import describe as describe_phases
from cloudtrain.text.numbers import human_seconds


@cli.command()
@click.argument("job_id", metavar="JOB", type=JOB_ID)
@_job_options
@OUTPUT_OPTION
def status(
    job_id: str, backend: str | None, region: str | None, project: str | None, config_path: str | None, output: str
) -> None:
    """Show a job's state."""
    backends.check_plugins()
    if sweep.sweep_entry(job_id) is not None:
        sweep.show_status(job_id, output)
        return
    report = api.attach(job_id, backend=backend, region=region, project=project, config=config_path).status_report()
    if output == "json":
        print_json(report.to_dict())
        return
    result, interrupted = report.status, report.interruptions
    rows = flatten({k: v for k, v in result.to_dict().items() if k not in ("details", "job_id")})
    if report.phases:
        rows.append(("phases", describe_phases(report.phases)))
    details = {k: v for k, v in result.details.items() if k not in ("spot_interruptions", "pid_starts", "owner_start")}
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
        redone = "steps to redo" if item.get("resumed_at") is None else "steps redone"
        parts.append(f"{item['steps_redone']:,} {redone}")
    if item.get("seconds_lost") is not None:
        parts.append(f"{human_seconds(item['seconds_lost'])} lost")
    return ", ".join(parts)


@cli.command()
@click.argument("job_id", metavar="JOB", type=JOB_ID)
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
    job = api.attach(job_id, backend=backend, region=region, project=project, config=config_path)
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
        for line in job.logs(follow=False, debug=True, events=True):  # every line, events as they came
            show_json(line)
        return
    console = make_console()
    if follow:
        follow_job(console, job.handle, cancel_on_interrupt=False, debug=debug_enabled(), drain=drain)
        return
    printer = ReplicaPrinter(console, show_debug=True)  # what job.logs yields is shown: it held back the rest
    for line in job.logs(follow=False, debug=debug_enabled()):
        printer(line)


@cli.command()
@click.argument("job_id", metavar="JOB", type=JOB_ID)
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
    job = api.attach(job_id, backend=backend, region=region, project=project, config=config_path)
    result = job.cancel(wait=wait)
    if output == "json":
        print_json(result.to_dict())
    else:  # a sweep (a tuning job, a Slurm array) speaks of itself and of its trials
        what = "Sweep" if callable(getattr(job.handle, "results", None)) else "Job"
        make_console().print(f"{what} {result.job_id}: {result.state.value}")
