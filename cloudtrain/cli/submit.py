"""``cloudtrain submit``: build, upload, create, follow."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from cloudtrain.app.notices import Notice
from cloudtrain.app.plan import make_plan
from cloudtrain.app.prepare import load_spec, prepare, resumed, with_include
from cloudtrain.backends import get_backend
from cloudtrain.cli._group import (
    DRAIN_OPTION,
    OUTPUT_OPTION,
    SET_OPTION,
    STRICT_OPTION,
    cli,
    config_argument,
    pick_config,
)
from cloudtrain.cli._summary import print_summary
from cloudtrain.config import LoadedConfig
from cloudtrain.console import Console, escape, make_console, print_json
from cloudtrain.errors import UsageError
from cloudtrain.spec import JobSpec


@cli.command()
@config_argument
@SET_OPTION
@click.option("--dry-run", is_flag=True, help="Build the package and print the request; upload and create nothing.")
@click.option("--local", is_flag=True, help="Run the job on this machine under the cloud's environment contract.")
@click.option("--detach", is_flag=True, help="Return after the job is created instead of streaming its logs.")
@click.option("--cancel-on-interrupt", is_flag=True, help="On Ctrl-C cancel the cloud job instead of detaching.")
@click.option(
    "--resume",
    "resume_job",
    metavar="JOB",
    help="Continue JOB's checkpoints (a job of this config, stopped or preempted) in a new job.",
)
@click.option(
    "--include",
    "include",
    multiple=True,
    metavar="PATTERN",
    help="Package files matching PATTERN (gitignore syntax, in the package folder) that look like "
    "credentials and would be left out; with a warning (repeatable).",
)
@click.option(
    "--show-secrets",
    is_flag=True,
    help="Show env: values that look secret (shown as ***) in the text output, on a terminal only.",
)
@STRICT_OPTION
@DRAIN_OPTION
@OUTPUT_OPTION
def submit(
    config_arg: str | None,
    config_path: str | None,
    overrides: tuple[str, ...],
    dry_run: bool,
    local: bool,
    detach: bool,
    cancel_on_interrupt: bool,
    resume_job: str | None,
    include: tuple[str, ...],
    show_secrets: bool,
    strict: bool,
    drain: float | None,
    output: str,
) -> None:
    """Build, upload and run a job; stream its logs; exit with the job's outcome.

    CONFIG may be given as an argument or with --config."""
    if show_secrets:
        refuse_show_secrets(output)
    loaded, spec = load_spec(pick_config(config_arg, config_path), overrides, local=local, strict=strict)
    spec = with_include(spec, include)
    if resume_job:
        spec = resumed(spec, get_backend(spec.backend), resume_job)
    run_submit(
        loaded,
        spec,
        dry_run=dry_run,
        detach=detach,
        cancel_on_interrupt=cancel_on_interrupt,
        output=output,
        overrides=overrides,
        drain=drain,
        show_secrets=show_secrets,
    )


def refuse_show_secrets(output: str) -> None:
    """``--show-secrets`` is for a person at a terminal: never into JSON, a pipe or a file."""
    if output == "json" or not sys.stdout.isatty():
        where = "-o json" if output == "json" else "output that is not a terminal"
        raise UsageError(
            f"--show-secrets is refused with {where}: secret values would end up in a file or another program",
            hint="drop --show-secrets (values show as ***), or run it in a terminal",
        )


def run_submit(
    loaded: LoadedConfig,
    spec: JobSpec,
    *,
    dry_run: bool,
    detach: bool,
    cancel_on_interrupt: bool,
    output: str,
    overrides: Sequence[str] = (),
    drain: float | None = None,
    show_secrets: bool = False,
) -> None:
    """The one submit path, for ``submit`` and the gcloud forms: the app layer prepares, plans or
    launches (:mod:`cloudtrain.app`); this prints what it reports and follows the job to its end
    unless ``detach``."""
    console = make_console(sys.stderr if output == "json" else None)
    notify = _printer(console)
    prepared = prepare(loaded, spec, overrides=overrides, show_secrets=show_secrets, notify=notify)
    spec, package = prepared.spec, prepared.package
    if dry_run:
        plan = make_plan(prepared, show_secrets=show_secrets)
        if output == "json":
            print_json(plan.to_dict())
            return
        print_summary(console, spec, package)
        console.print("\n[bold]Request[/bold] (nothing was uploaded or created):")
        _print_request(console, plan.request)
        for number, candidate in enumerate(plan.fallbacks, 1):
            console.print(f"\n[bold]Fallback {number}[/bold], if the ones before it get no capacity:")
            print_summary(console, candidate.spec, package)
            _print_request(console, candidate.request)
        return
    print_summary(console, spec, package)
    from cloudtrain.cli._launched import launch_and_follow  # launch, follow, sweeps: not on --dry-run

    launch_and_follow(
        console,
        prepared,
        notify=notify,
        detach=detach,
        cancel_on_interrupt=cancel_on_interrupt,
        output=output,
        drain=drain,
    )


def _print_request(console: Console, request: dict[str, Any]) -> None:
    """The request as JSON, with each multi-line text in it (a batch script) printed as its lines after it."""
    texts = {key: value for key, value in request.items() if isinstance(value, str) and "\n" in value}
    console.print_json(data={key: value for key, value in request.items() if key not in texts})
    for key, text in texts.items():
        console.print(f"\n[bold]{key}[/bold]:")
        console.print(escape(text.rstrip("\n")))


def _printer(console: Console) -> Callable[[Notice], None]:
    """The app layer's notices as the CLI shows them: warnings on stderr, fallback moves in yellow."""

    def show(notice: Notice) -> None:
        if notice.kind == "warning":
            click.echo(f"warning: {notice.text}", err=True)
        else:
            console.print(f"[yellow]{escape(notice.text)}[/yellow]")

    return show
