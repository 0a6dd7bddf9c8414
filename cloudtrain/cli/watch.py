"""``cloudtrain tensorboard JOB…`` and ``cloudtrain outputs JOB``: parse and print over the app layer's use cases."""

from __future__ import annotations

import json
import sys
import time
import webbrowser
from pathlib import Path

import click

from cloudtrain.app import outputs as app_outputs
from cloudtrain.app import tensorboard as app_tensorboard
from cloudtrain.app.experiments import experiment_jobs
from cloudtrain.cli._group import JOB_ID, OUTPUT_OPTION, cli
from cloudtrain.console import make_console, print_json, print_table
from cloudtrain.errors import BackendError, UsageError
from cloudtrain.text.numbers import size


@cli.command()
@click.argument("job_ids", metavar="[JOB]…", nargs=-1, type=JOB_ID)
@click.option("--experiment", help="Every job of this experiment (the config's experiment:) in this machine's history.")
@click.option("--port", type=click.IntRange(1, 65535), default=app_tensorboard.DEFAULT_PORT, show_default=True)
@click.option("--bind", default="127.0.0.1", show_default=True, help="Address to serve on (0.0.0.0: every interface).")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a browser.")
@OUTPUT_OPTION
def tensorboard(
    job_ids: tuple[str, ...], experiment: str | None, port: int, bind: str, open_browser: bool, output: str
) -> None:
    """Serve TensorBoard here over the runs' event files, each run named by its job: a local run, a
    Slurm run folder, gs:// and s3:// (copied into the cache, only new bytes, while the job runs)."""
    ids = list(job_ids) + (experiment_jobs(experiment) if experiment else [])
    if not ids:
        raise UsageError("no jobs given", hint="cloudtrain tensorboard JOB [JOB…] or --experiment NAME")
    board = app_tensorboard.serve(list(dict.fromkeys(ids)), port=port, bind=bind)
    try:
        if output == "json":  # one line: a script reads it while the server runs on
            click.echo(json.dumps(board.to_dict()))
        else:
            for run in board.runs:
                click.echo(f"{run.name}: {run.source}", err=True)
            click.echo(board.url)
            click.echo("Press Ctrl-C to stop.", err=True)
        sys.stdout.flush()
        if open_browser:
            webbrowser.open(board.url)
        while board.alive:
            time.sleep(0.5)
        raise BackendError(f"TensorBoard stopped (exit {board.process.returncode})")
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
    finally:
        board.stop()


@cli.command()
@click.argument("job_id", metavar="JOB", type=JOB_ID)
@click.option("--download", "dest", type=click.Path(file_okay=False), help="Fetch every file into this folder.")
@click.option("--force", is_flag=True, help="Overwrite files in the folder that differ from the job's.")
@OUTPUT_OPTION
def outputs(job_id: str, dest: str | None, force: bool, output: str) -> None:
    """List what a job produced (model, checkpoints, TensorBoard logs, replicas' logs, anything under its
    output folder) with sizes; --download DIR fetches them (resumes, verifies sizes and checksums)."""
    listing = app_outputs.list_outputs(app_tensorboard.attach(job_id))
    for note in listing.notes:
        click.echo(f"warning: {note}", err=True)
    if dest is None:
        if output == "json":
            print_json(listing.to_dict())
            return
        for part, where in listing.sources.items():
            click.echo(f"{part}: {where}", err=True)
        print_table(
            make_console(), ["file", "size"], [(o.path, size(o.file.size)) for o in listing.files], id_columns=["file"]
        )
        state = "so far (the job is running)" if listing.running else ""
        click.echo(f"{len(listing.files)} files, {size(listing.total_bytes)} {state}".rstrip(), err=True)
        return
    done = app_outputs.download(listing, Path(dest), force=force, progress=_progress())
    if output == "json":
        print_json({"dest": str(done.dest), "fetched": done.fetched, "kept": done.kept, "bytes": done.bytes})
        return
    kept = f", {len(done.kept)} already there" if done.kept else ""
    click.echo(f"{done.dest}: {len(done.fetched)} files fetched ({size(done.bytes)}){kept}")


def _progress() -> app_outputs.Progress:
    """A live line on a terminal; elsewhere one line per file."""
    last = [""]

    def show(done: int, total: int, path: str) -> None:
        pct = done * 100 // total if total else 100
        line = f"{size(done)} / {size(total)} ({pct}%) {path}"
        if sys.stderr.isatty():
            click.echo("\r" + line[:120].ljust(120), nl=False, err=True)
        elif path != last[0]:
            click.echo(f"fetching {path}", err=True)
        last[0] = path

    return show
