"""``cloudtrain report JOB [JOB…]``: an HTML page with PNGs of one or several runs."""

from __future__ import annotations

from pathlib import Path

import click

from cloudtrain.app.report import write_report
from cloudtrain.cli._group import OUTPUT_OPTION, cli
from cloudtrain.console import print_json


@cli.command()
@click.argument("job_ids", metavar="JOB…", nargs=-1, required=True)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Folder for report.html and its PNGs. Default: cloudtrain-reports/<job> (of several: <A>+<B>+…).",
)
@OUTPUT_OPTION
def report(job_ids: tuple[str, ...], out_dir: str | None, output: str) -> None:
    """Write a run report: start-up timeline, loss and metric per epoch, examples/s, cost; several
    jobs side by side (e.g. 1 vs 4 GPUs: speed-up and cost per epoch); a sweep's trials."""
    written = write_report(list(job_ids), Path(out_dir) if out_dir else None)
    if output == "json":
        print_json({"report": str(written.page), "figures": {k: str(v) for k, v in written.figures.items()}})
    else:
        click.echo(str(written.page))
