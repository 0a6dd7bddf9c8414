"""The report as one HTML file: figures inlined as data URIs (it needs no network and no file beside it
to show), tables of the real numbers, and the PNGs also written beside it for reuse."""

from __future__ import annotations

import base64
import datetime as dt
import html
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cloudtrain.following.interruptions import describe as describe_interruptions
from cloudtrain.following.timeline import human_seconds
from cloudtrain.reporting.collect import RunData
from cloudtrain.text.numbers import measured, money

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
    for name, caption in (
        ("timeline", "Start-up timeline"),
        ("epochs", "Loss and metric per epoch"),
        ("throughput", "Examples/s per replica"),
        ("comparison", "Side by side"),
        ("trials", "Sweep trials"),
    ):
        parts += _figure(figures, name, caption)
    parts += _tables(runs)
    page = (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
        f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>\n"
    )
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def _tables(runs: list[RunData]) -> list[str]:
    parts = []
    for run in runs:
        if run.phases:
            parts.append(f"<h2>Timeline · {_e(run.job_id)}</h2>")
            parts.append(
                _table(
                    ["phase", "seconds", "share", "cost"],
                    [
                        (p["phase"], measured(p["seconds"]), f"{measured(p['share'] * 100)} %", _usd(p.get("cost_usd")))
                        for p in run.phases
                    ],
                    css_id=f"timeline-{_slug(run.job_id)}",
                )
            )
    for run in runs:
        if run.interruptions and run.interruptions.get("items"):
            parts.append(f"<h2>Interruptions · {_e(run.job_id)}</h2>")
            parts.append(
                _table(
                    [
                        "stopped at",
                        "source",
                        "step reached",
                        "resumed from step",
                        "steps redone",
                        "down (s)",
                        "redo (s)",
                        "time lost",
                    ],
                    [
                        (
                            i.get("at") or "",
                            i.get("source"),
                            measured(i.get("step")),
                            measured(
                                i.get("resume_step") if i.get("resume_step") is not None else i.get("checkpoint_step")
                            ),
                            measured(i.get("steps_redone")) + ("" if i.get("exact", True) else " (at least)"),
                            measured(i.get("down_s")),
                            measured(i.get("redo_s")),
                            human_seconds(i["seconds_lost"]) if i.get("seconds_lost") is not None else "",
                        )
                        for i in run.interruptions["items"]
                    ],
                    css_id=f"interruptions-{_slug(run.job_id)}",
                )
            )
    for run in runs:
        if run.epochs:
            parts.append(f"<h2>Epochs · {_e(run.job_id)}</h2>")
            keys = [
                k
                for k in ("loss", "accuracy", "val_loss", "val_accuracy", "examples_per_sec", "epoch_time_s")
                if any(isinstance(e.get(k), (int, float)) for e in run.epochs)
            ]
            parts.append(
                _table(
                    ["epoch", *keys],
                    [(e.get("epoch"), *(measured(e.get(k)) for k in keys)) for e in run.epochs],
                    css_id=f"epochs-{_slug(run.job_id)}",
                )
            )
    for run in runs:
        if run.trials:
            parts.append(f"<h2>Trials · {_e(run.job_id)}</h2>")
            params = sorted({k for t in run.trials for k in t.get("params", {})})
            parts.append(
                _table(
                    ["trial", "state", run.metric or "value", *params],
                    [
                        (
                            ("★ " if t.get("best") else "") + str(t["trial"]),
                            t["state"],
                            measured(t.get("value")),
                            *(measured(t.get("params", {}).get(p)) for p in params),
                        )
                        for t in run.trials
                    ],
                    css_id=f"trials-{_slug(run.job_id)}",
                )
            )
    return parts


def _summary(runs: list[RunData]) -> list[str]:
    """One row per run; the speed-up column only when there is a run to compare with the first."""
    base = runs[0].examples_per_sec
    compare = len(runs) > 1
    rows = []
    for run in runs:
        speed = run.examples_per_sec
        speed_up = [f"{measured(speed / base)}×" if speed and base else ""] if compare else []
        rows.append(
            (
                run.job_id,
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
    columns = [
        "job",
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


def _figure(figures: dict[str, Path], name: str, caption: str) -> list[str]:
    path = figures.get(name)
    if path is None:
        return []
    data = base64.b64encode(path.read_bytes()).decode()
    return [
        f"<h2>{_e(caption)}</h2>",
        f'<img id="fig-{name}" alt="{_e(caption)}" src="data:image/png;base64,{data}">',
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
