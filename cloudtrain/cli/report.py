"""``cloudtrain report JOB [JOB…]``: an HTML page with PNGs of one or several runs."""

from __future__ import annotations

from pathlib import Path

import click

from cloudtrain.app.experiments import experiment_jobs
from cloudtrain.app.report import write_report
from cloudtrain.cli._group import JOB_ID, OUTPUT_OPTION, cli
from cloudtrain.console import print_json
from cloudtrain.errors import UsageError


@cli.command()
@click.argument("job_ids", metavar="[JOB]…", nargs=-1, type=JOB_ID)
@click.option("--experiment", help="Every job of this experiment (the config's experiment:), side by side.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Folder for report.html and its PNGs. Default: cloudtrain-reports/<job> (of several: <A>+<B>+…).",
)
@OUTPUT_OPTION
def report(job_ids: tuple[str, ...], experiment: str | None, out_dir: str | None, output: str) -> None:
    """Write a run report: start-up timeline, loss and metric per epoch, examples/s, cost; several
    jobs side by side (e.g. 1 vs 4 GPUs: speed-up and cost per epoch); a sweep's trials."""
    ids = list(dict.fromkeys([*job_ids, *(experiment_jobs(experiment) if experiment else [])]))
    if not ids:
        raise UsageError("no jobs given", hint="cloudtrain report JOB [JOB…] or --experiment NAME")
    written = write_report(ids, Path(out_dir) if out_dir else None)
    if output == "json":
        print_json({"report": str(written.page), "figures": {k: str(v) for k, v in written.figures.items()}})
    else:
        click.echo(str(written.page))
