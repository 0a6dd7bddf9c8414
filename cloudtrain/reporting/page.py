"""The report as one HTML file: figures inlined as data URIs (it needs no network and no file beside it
to show), tables of the real numbers, and the PNGs also written beside it for reuse."""

from __future__ import annotations

import base64
import datetime as dt
import html
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cloudtrain.following.events import main_metric
from cloudtrain.following.interruptions import describe as describe_interruptions
from cloudtrain.reporting.collect import RunData
from cloudtrain.text.numbers import human_seconds, measured, money

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .5rem 0 1rem; } th, td { padding: .25rem .6rem; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
tr:nth-child(even) { background: #fafafa; }
img { max-width: 100%; border: 1px solid #eee; } .note { color: #666; font-size: .9em; }
"""


COLLAPSE_ROWS = 20  # a longer table is folded away (<details>) so it does not push the rest down


def write(runs: list[RunData], figures: dict[str, Path], out: Path) -> Path:
    """The page: the runs' summary, then the charts, then the long tables of the real numbers."""
    title = "cloudtrain run report: " + ", ".join(r.job_id for r in runs)
    parts = [
        f"<h1>{_e(title)}</h1>",
        f'<p class="note">Written {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M UTC} by cloudtrain. '
        "Costs are catalog list prices × time, not an invoice.</p>",
    ]
    parts += _summary(runs)
    why = missing(runs)
    for name, caption in (
        ("timeline", "Start-up timeline"),
        ("epochs", "Loss and metric per epoch"),
        ("throughput", "Examples/s per replica"),
        ("comparison", "Side by side"),
        ("trials", "Sweep trials"),
    ):
        parts += _figure(figures, name, caption, why.get(name, []))
    parts += _tables(runs)
    page = (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
        f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>\n"
    )
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def _tables(runs: list[RunData]) -> list[str]:
    """Each run's timeline, interruptions, epochs and trials, section by section (a run without one shows none)."""
    parts = []
    for title, table_of in (
        ("Timeline", _timeline),
        ("Interruptions", _interruptions),
        ("Epochs", _epochs),
        ("Trials", _trials),
    ):
        for run in runs:
            table = table_of(run)
            if table is not None:
                parts.append(f"<h2>{title} · {_e(run.job_id)}</h2>")
                parts.append(_table(*table, css_id=f"{title.lower()}-{_slug(run.job_id)}"))
    return parts


Table = tuple[list[str], list[tuple[Any, ...]]]  # a table's header and its rows


def _timeline(run: RunData) -> Table | None:
    if not run.phases:
        return None
    return ["phase", "seconds", "share", "cost"], [
        (p["phase"], measured(p["seconds"]), f"{measured(p['share'] * 100)} %", _usd(p.get("cost_usd")))
        for p in run.phases
    ]


def _interruptions(run: RunData) -> Table | None:
    if not (run.interruptions and run.interruptions.get("items")):
        return None
    header = [
        "stopped at",
        "source",
        "step reached",
        "resumed from step",
        "steps redone",
        "down (s)",
        "redo (s)",
        "time lost",
    ]
    return header, [
        (
            i.get("at") or "",
            i.get("source"),
            measured(i.get("step")),
            measured(i.get("resume_step") if i.get("resume_step") is not None else i.get("checkpoint_step")),
            measured(i.get("steps_redone")) + ("" if i.get("exact", True) else " (at least)"),
            measured(i.get("down_s")),
            measured(i.get("redo_s")),
            human_seconds(i["seconds_lost"]) if i.get("seconds_lost") is not None else "",
        )
        for i in run.interruptions["items"]
    ]


def _epochs(run: RunData) -> Table | None:
    if not run.epochs:
        return None
    keys = [
        k
        for k in ("loss", "accuracy", "val_loss", "val_accuracy", "examples_per_sec", "epoch_time_s")
        if any(isinstance(e.get(k), (int, float)) for e in run.epochs)
    ]
    return ["epoch", *keys], [(e.get("epoch"), *(measured(e.get(k)) for k in keys)) for e in run.epochs]


def _trials(run: RunData) -> Table | None:
    if not run.trials:
        return None
    params = sorted({k for t in run.trials for k in t.get("params", {})})
    return ["trial", "state", run.metric or "value", *params], [
        (
            ("★ " if t.get("best") else "") + str(t["trial"]),
            t["state"],
            measured(t.get("value")),
            *(measured(t.get("params", {}).get(p)) for p in params),
        )
        for t in run.trials
    ]


def differing_args(runs: list[RunData]) -> tuple[list[str], list[str]]:
    """Each run's args that not every run shares (what the comparison is about), and those all share."""
    known = [r.args for r in runs if r.args]
    common = [a for a in known[0] if all(a in other for other in known[1:])] if len(known) > 1 else []
    return [" ".join(a for a in r.args if a not in common) for r in runs], common


def _summary(runs: list[RunData]) -> list[str]:
    """One row per run: what it ran with (the args that differ between the runs first), its experiment, its final and
    best main metric, then speed and cost; the speed-up column only when there is a run to compare with the first."""
    base = runs[0].examples_per_sec
    compare = len(runs) > 1
    metric = next((found[0] for r in runs if (found := main_metric(r.metrics or _last_epoch(r)))), None)
    experiments = any(r.experiment for r in runs)
    args, common = differing_args(runs)
    rows = []
    for run, its_args in zip(runs, args, strict=True):
        speed = run.examples_per_sec
        speed_up = [f"{measured(speed / base)}×" if speed and base else ""] if compare else []
        final, best = run.final_and_best(metric) if metric else (None, None)
        rows.append(
            (
                run.job_id,
                *([run.experiment or ""] if experiments else []),
                its_args,
                *([measured(final), measured(best)] if metric else []),
                run.backend,
                run.state,
                run.replicas or "",
                human_seconds(run.wall_s) if run.wall_s is not None else "",
                len(run.epochs) or "",
                measured(speed),
                *speed_up,
                _usd(run.cost_usd),
                _usd(run.cost_per_epoch),
                describe_interruptions(run.interruptions) or "none",
            )
        )
    notes = sorted({f"{r.job_id}: {r.cost_basis}" for r in runs})
    if common:
        notes.insert(0, f"args of every run: {' '.join(common)}")
    columns = [
        "job",
        *(["experiment"] if experiments else []),
        "args" if not compare else "args (what differs)",
        *([f"final {metric}", f"best {metric}"] if metric else []),
        "backend",
        "state",
        "replicas",
        "wall time",
        "epochs",
        "examples/s",
        *(["speed-up"] if compare else []),
        "cost",
        "cost/epoch",
        "interruptions",
    ]
    return [
        "<h2>Runs</h2>",
        _table(columns, rows, css_id="runs"),
        "".join(f'<p class="note">{_e(n)}</p>' for n in notes),
    ]


def _last_epoch(run: RunData) -> dict[str, Any]:
    return run.epochs[-1] if run.epochs else {}


def missing(runs: list[RunData]) -> dict[str, list[str]]:
    """Why a chart has nothing for a run, by chart: one line per run it leaves out."""
    why: dict[str, list[str]] = {"epochs": [], "throughput": [], "comparison": []}
    for run in runs:
        if not run.trials and not run.epochs:
            why["epochs"].append(f'{run.job_id}: its log has no {{"event": "epoch"}} lines to draw')
        if not run.trials and not run.rates:
            why["throughput"].append(f"{run.job_id}: its epoch lines give no examples_per_sec")
        if len(runs) > 1 and run.cost_per_epoch is None:
            why["comparison"].append(f"{run.job_id}: no cost per epoch: {run.cost_basis}")
    return why


def _figure(figures: dict[str, Path], name: str, caption: str, why: Sequence[str] = ()) -> list[str]:
    path = figures.get(name)
    notes = "".join(f'<p class="note why-{name}">{_e(line)}</p>' for line in why)
    if path is None:
        return [f"<h2>{_e(caption)}</h2>", notes] if why and name != "comparison" else []
    data = base64.b64encode(path.read_bytes()).decode()
    return [
        f"<h2>{_e(caption)}</h2>",
        f'<img id="fig-{name}" alt="{_e(caption)}" src="data:image/png;base64,{data}">',
        notes,
        f'<p class="note">Also saved as {_e(path.name)}.</p>',
    ]


def _table(columns: list[str], rows: Iterable[Iterable[Any]], css_id: str) -> str:
    """An HTML table; past :data:`COLLAPSE_ROWS` rows, folded under a line that says how many."""
    rows = list(rows)
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>" for row in rows)
    table = f'<table id="{_e(css_id)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    if len(rows) <= COLLAPSE_ROWS:
        return table
    return f"<details><summary>{len(rows)} rows</summary>{table}</details>"


def _usd(value: float | None) -> str:
    return money(value) or ""


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)
