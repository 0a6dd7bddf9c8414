"""``cloudtrain submit``: build, upload, create, follow."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

import click

from cloudtrain.app.notices import Detached, Notice
from cloudtrain.app.plan import Plan
from cloudtrain.app.prepare import Prepared
from cloudtrain.app.submit import SubmitOptions
from cloudtrain.app.submit import submit as submit_job
from cloudtrain.cli._group import (
    DRAIN_OPTION,
    JOB_ID,
    OUTPUT_OPTION,
    SET_OPTION,
    STRICT_OPTION,
    cli,
    config_argument,
    pick_config,
)
from cloudtrain.cli._summary import print_summary
from cloudtrain.console import Console, escape, make_console, print_json
from cloudtrain.errors import UsageError

if TYPE_CHECKING:
    from cloudtrain.app.launch import Launched


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
    type=JOB_ID,
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
    options = SubmitOptions(
        overrides, local=local, strict=strict, include=include, resume=resume_job, show_secrets=show_secrets
    )
    with SubmitPrinter(output, drain=drain) as view:
        submit_job(
            pick_config(config_arg, config_path),
            options,
            view,
            dry_run=dry_run,
            detach=detach,
            cancel_on_interrupt=cancel_on_interrupt,
            drain=drain,
        )


def refuse_show_secrets(output: str) -> None:
    """``--show-secrets`` is for a person at a terminal: never into JSON, a pipe or a file."""
    if output == "json" or not sys.stdout.isatty():
        where = "-o json" if output == "json" else "output that is not a terminal"
        raise UsageError(
            f"--show-secrets is refused with {where}: secret values would end up in a file or another program",
            hint="drop --show-secrets (values show as ***), or run it in a terminal",
        )


class SubmitPrinter:
    """What a submit tells (:class:`cloudtrain.app.submit.SubmitView`), as ``submit`` and the gcloud forms
    print it; as a context, a Ctrl-C that leaves the job running prints how to find it and exits 130."""

    def __init__(self, output: str, *, drain: float | None = None) -> None:
        self.console = make_console(sys.stderr if output == "json" else None)
        self.output, self.drain = output, drain
        self.notice = _printer(self.console)

    def __enter__(self) -> SubmitPrinter:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        if isinstance(error, Detached):
            if error.just_created:
                self.console.print(f"[bold]Job[/bold] {error.job_id} created")
            self._launched().print_detached(self.console, error.job_id, error.reattach)
            raise SystemExit(130) from None

    def planned(self, prepared: Prepared, plan: Plan) -> None:
        if self.output == "json":
            print_json(plan.to_dict())
            return
        console, package = self.console, prepared.package
        print_summary(console, prepared.spec, package)
        console.print("\n[bold]Request[/bold] (nothing was uploaded or created):")
        _print_request(console, plan.request)
        for number, candidate in enumerate(plan.fallbacks, 1):
            console.print(f"\n[bold]Fallback {number}[/bold], if the ones before it get no capacity:")
            print_summary(console, candidate.spec, package)
            _print_request(console, candidate.request)

    def prepared(self, prepared: Prepared) -> None:
        print_summary(self.console, prepared.spec, prepared.package)

    def sweep(self, prepared: Prepared, *, detach: bool, cancel: bool) -> None:
        self._launched().submit_sweep(self.console, prepared, detach=detach, output=self.output, cancel=cancel)

    def created(self, launched: Launched, *, here: bool) -> None:
        self._launched().print_created(self.console, launched, here=here)

    def detached(self, launched: Launched, reattach: str) -> None:
        self._launched().print_hints(self.console, launched.handle.job_id, reattach)
        if self.output == "json":
            print_json(launched.first.to_dict())

    def follow(self, launched: Launched, *, cancel_on_interrupt: bool) -> None:
        self._launched().follow_launched(
            self.console, launched, cancel_on_interrupt=cancel_on_interrupt, output=self.output, drain=self.drain
        )

    @staticmethod
    def _launched() -> ModuleType:
        from cloudtrain.cli import _launched  # launch, follow, sweeps: not on --dry-run

        return _launched


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
