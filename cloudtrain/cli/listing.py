"""``cloudtrain list``: this machine's history, one line per job on any terminal; with --backend and
--region (or --config), the cloud's own list for that region."""

from __future__ import annotations

import click

from cloudtrain.app.experiments import experiment_jobs
from cloudtrain.app.listing import Listed, listed
from cloudtrain.app.locate import locate
from cloudtrain.app.sweeps.lookup import load_results
from cloudtrain.cli._group import OUTPUT_OPTION, cli, job_options
from cloudtrain.console import make_console, print_json, print_table
from cloudtrain.errors import CloudtrainError
from cloudtrain.statefiles import StateError
from cloudtrain.text.numbers import measured

GAP = "  "
#: What a terminal's line shows, in order; ``created`` only where the line has room for it.
COLUMNS = ("job", "state", "took", "metric", "created", "where")


@cli.command(name="list")
@click.option("--limit", default=20, show_default=True)
@click.option("--experiment", help="Only the jobs of this experiment (the config's experiment:).")
@job_options
@OUTPUT_OPTION
def list_jobs(
    limit: int,
    experiment: str | None,
    backend: str | None,
    region: str | None,
    project: str | None,
    config_path: str | None,
    output: str,
) -> None:
    """Recent jobs from this machine's history, every backend; with --backend and --region (or
    --config), the cloud's own list for that region (jobs submitted from anywhere)."""
    if experiment or (not config_path and not (backend and region)):
        _list_history(limit, backend, region, output, experiment)
        return
    where = locate(None, backend, region, project, config_path)
    jobs = where.backend.list_jobs(region=where.region, project=where.project, limit=limit)
    if output == "json":
        print_json([j.to_dict() for j in jobs])
        return
    extra = where.backend.facts.list_columns  # the backend's own columns (Slurm: cluster, partition, nodes)
    print_table(
        make_console(),
        ["job", "state", *extra, "created", "message"],
        [(j.job_id, j.state.value, *(j.details.get(k) or "" for k in extra), j.created, j.message) for j in jobs],
        id_columns=["job"],
    )


def _list_history(limit: int, backend: str | None, region: str | None, output: str, experiment: str | None) -> None:
    jobs = listed(limit, backend=backend, region=region, experiment=experiment)
    sweeps = {job.record.job_id: _sweep_state(job.record.job_id) for job in jobs if job.record.kind == "sweep"}
    if output == "json":
        print_json(
            [job.to_dict() | ({"state": sweeps[j]} if sweeps.get(j := job.record.job_id) else {}) for job in jobs]
        )
        return
    if not jobs and experiment:
        experiment_jobs(experiment)  # none of that name: one line naming the experiments there are
    if not jobs:
        flags = backend or region or experiment
        click.echo("no jobs in this machine's history" + (" for these flags" if flags else ""), err=True)
        return
    console = make_console()
    rows = [_row(job, sweeps.get(job.record.job_id)) for job in jobs]
    for row, args in zip(rows, differing_args([job.record.args for job in jobs]), strict=True):
        row["args"] = args
    if not console.is_terminal:  # a pipe: every field, tab-separated, for scripts (-o json for all of it)
        print_table(
            console,
            ["job", "kind", "backend", "region", "state", "created", "took", "metric", "where", "name", "args"],
            [
                (
                    job.record.job_id,
                    job.record.kind or "job",
                    job.record.backend,
                    job.record.region,
                    row["state"],
                    row["created"],
                    row["took"],
                    row["metric"],
                    row["where"],
                    job.record.name,
                    " ".join(job.record.args or ()),
                )
                for job, row in zip(jobs, rows, strict=True)
            ],
        )
        return
    lines = one_line_each(rows, console.width)
    console.file.write("".join(line + "\n" for line in lines))
    console.file.flush()


def _row(job: Listed, sweep: str | None) -> dict[str, str]:
    record = job.record
    state = sweep or job.state or ""
    metric = "" if job.metric is None else f"{job.metric[0]}={measured(job.metric[1])}"
    if sweep and ", best " in sweep:  # SUCCEEDED: 8/8 trials, best val_accuracy=0.98 (trial 5)
        state, best = sweep.split(", best ", 1)
        metric = "best " + best
    kind = "" if record.kind in (None, "job") else f"{record.kind} "
    return {
        "job": record.job_id,
        "state": state,
        "took": "" if job.seconds is None else _took(job.seconds),
        "metric": metric,
        "created": (record.created or "")[:16].replace("T", " "),
        "where": kind + job.place,
    }


def _took(seconds: float) -> str:
    """``48s``, ``5m05s``, ``3h05m``, ``2d04h``: short enough for a column of 80."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    hours, minutes = divmod(seconds // 60, 60)
    return f"{hours}h{minutes:02d}m" if hours < 48 else f"{hours // 24}d{hours % 24:02d}h"


def differing_args(each: list[list[str] | None]) -> list[str]:
    """Each job's args as ``list`` shows them: what differs between the listed jobs (``--lr=0.01``), the
    args every one of them shares left out; all of a job's args where no other job has any to compare."""
    known = [set(a) for a in each if a]
    common = set.intersection(*known) if len(known) > 1 else set()
    return [" ".join(a for a in (args or ()) if a not in common) for args in each]


def one_line_each(rows: list[dict[str, str]], width: int) -> list[str]:
    """A header and one line per job, each at most ``width`` characters. The job id is never cut. ``created``
    shows only where the line has room for it; the place, then the metric are cut (with ``…``) down to 8
    characters; a column that still does not fit is left out (the place, then the metric, then the time
    taken: ``-o json`` has them all), and the state last of all is cut at the line's end. The args (what
    differs between the jobs, :func:`differing_args`) take what the line has left, at its end, cut with ``…``."""
    width = max(width, 20)
    args = max((len(r.get("args", "")) for r in rows), default=0)
    if args:
        room = min(max(args, len("args")), 24) + len(GAP)  # what the args keep before the rest is laid out
        lines = one_line_each([{c: r[c] for c in COLUMNS} for r in rows], width - room)
        rest = width - max(len(line) for line in lines) - len(GAP)
        if rest < 6:
            return lines
        cells = ["args", *(r.get("args", "") for r in rows)]
        pad = max(len(line) for line in lines)
        return [
            (line.ljust(pad) + GAP + _fit(cell, rest)).rstrip() if cell else line
            for line, cell in zip(lines, cells, strict=True)
        ]
    natural = {c: max(len(c), *(len(r[c]) for r in rows)) for c in COLUMNS}
    shown = [c for c in COLUMNS if c != "created"]
    if _width(shown, natural) - natural["where"] + natural["created"] + len(GAP) + min(natural["where"], 20) <= width:
        shown.insert(shown.index("where"), "created")
    widths = dict(natural)
    least = min(natural["where"], 12)  # a place cut shorter than this says little
    rest = width - _width([c for c in shown if c != "where"], widths) - len(GAP)
    if rest < least:  # the metric gives up to its last 8 characters first
        widths["metric"] = max(natural["metric"] - (least - rest), min(8, natural["metric"]))
        rest = width - _width([c for c in shown if c != "where"], widths) - len(GAP)
    widths["where"] = max(min(natural["where"], rest), 0)
    if widths["where"] < min(least, 8):
        shown.remove("where")
    for column in ("metric", "took"):
        if _width(shown, widths) > width:
            shown.remove(column)
    lines = []
    for row in [{c: c for c in COLUMNS}, *rows]:
        cells = [_fit(row[c], widths[c], left=c == "where") for c in shown]
        line = GAP.join(cell.ljust(widths[c]) for cell, c in zip(cells, shown, strict=True)).rstrip()
        lines.append(line if len(line) <= width else line[: width - 1] + "…")
    return lines


def _width(shown: list[str], widths: dict[str, int]) -> int:
    return sum(widths[c] for c in shown) + len(GAP) * (len(shown) - 1)


def _fit(text: str, width: int, *, left: bool = False) -> str:
    """``text`` in ``width`` characters: cut at the end, or for a place at the start (its tail says most)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    name, equals, value = text.rpartition("=")
    if equals and not left and width >= len(value) + 3:  # a metric keeps its value: val_acc…=0.8125
        return f"{name[: width - len(value) - 2]}…={value}"
    if not left:
        return text[: width - 1] + "…"
    return "…" + text[-(width - 1) :]  # a place's end says most: …/my-model


def _sweep_state(job_id: str) -> str | None:
    """``SUCCEEDED: 8/8 trials, best …``; UNKNOWN (one warning) when damaged; None when out of reach."""
    try:
        table = load_results(job_id)
    except StateError as exc:
        click.echo(f"warning: {exc}", err=True)
        return "UNKNOWN"
    except CloudtrainError:
        return None
    done = sum(n for state, n in table.counts().items() if state in ("COMPLETE", "PRUNED", "FAIL"))
    best = table.best
    text = f"{table.state}: {done}/{table.max_trials or '?'} trials"
    return text + (f", best {table.metric}={measured(best.value)} (trial {best.trial})" if best else "")
