"""The report as one HTML file: figures inlined as data URIs (it needs no network and no file beside it
to show), tables of the real numbers, and the PNGs also written beside it for reuse."""

from __future__ import annotations

import base64
import datetime as dt
import html
from pathlib import Path
from typing import Any, Iterable

from cloudtrain.interruptions import describe as describe_interruptions
from cloudtrain.report.collect import RunData
from cloudtrain.timeline import human_seconds

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .5rem 0 1rem; } th, td { padding: .25rem .6rem; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; } tr:nth-child(even) { background: #fafafa; }
img { max-width: 100%; border: 1px solid #eee; } .note { color: #666; font-size: .9em; }
"""


def write(runs: list[RunData], figures: dict[str, Path], out: Path) -> Path:
    title = "cloudtrain run report: " + ", ".join(r.job_id for r in runs)
    parts = [f"<h1>{_e(title)}</h1>",
             f'<p class="note">Written {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M UTC} by cloudtrain. '
             "Costs are catalog list prices × time, not an invoice.</p>"]  # fmt: skip
    parts += _summary(runs)
    for run in runs:
        if run.phases:
            parts.append(f"<h2>Timeline · {_e(run.job_id)}</h2>")
            parts.append(_table(
                ["phase", "seconds", "share", "cost (USD)"],
                [(p["phase"], f"{p['seconds']:.1f}", f"{p['share'] * 100:.1f} %", _usd(p.get("cost_usd")))
                 for p in run.phases], css_id=f"timeline-{_slug(run.job_id)}",
            ))  # fmt: skip
    parts += _figure(figures, "timeline", "Start-up timeline")
    for run in runs:
        if run.interruptions and run.interruptions.get("items"):
            parts.append(f"<h2>Interruptions · {_e(run.job_id)}</h2>")
            parts.append(_table(
                ["stopped at", "source", "step reached", "resumed from step", "steps redone", "down (s)",
                 "redo (s)", "time lost"],
                [(i.get("at") or "", i.get("source"), _num(i.get("step")),
                  _num(i.get("resume_step") if i.get("resume_step") is not None else i.get("checkpoint_step")),
                  _num(i.get("steps_redone")) + ("" if i.get("exact", True) else " (at least)"),
                  _num(i.get("down_s")), _num(i.get("redo_s")),
                  human_seconds(i["seconds_lost"]) if i.get("seconds_lost") is not None else "")
                 for i in run.interruptions["items"]], css_id=f"interruptions-{_slug(run.job_id)}",
            ))  # fmt: skip
    epochs = [r for r in runs if r.epochs]
    for run in epochs:
        parts.append(f"<h2>Epochs · {_e(run.job_id)}</h2>")
        keys = [k for k in ("loss", "accuracy", "val_loss", "val_accuracy", "examples_per_sec", "epoch_time_s")
                if any(isinstance(e.get(k), (int, float)) for e in run.epochs)]  # fmt: skip
        parts.append(_table(["epoch", *keys], [(e.get("epoch"), *(_num(e.get(k)) for k in keys)) for e in run.epochs],
                            css_id=f"epochs-{_slug(run.job_id)}"))  # fmt: skip
    parts += _figure(figures, "epochs", "Loss and metric per epoch")
    parts += _figure(figures, "throughput", "Examples/s per replica")
    parts += _figure(figures, "comparison", "Side by side")
    for run in runs:
        if run.trials:
            parts.append(f"<h2>Trials · {_e(run.job_id)}</h2>")
            params = sorted({k for t in run.trials for k in t.get("params", {})})
            parts.append(_table(["trial", "state", "value", *params],
                                [(("★ " if t.get("best") else "") + str(t["trial"]), t["state"], _num(t.get("value")),
                                  *(t.get("params", {}).get(p, "") for p in params)) for t in run.trials],
                                css_id=f"trials-{_slug(run.job_id)}"))  # fmt: skip
    parts += _figure(figures, "trials", "Sweep trials")
    page = (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
            f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>\n")  # fmt: skip
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def _summary(runs: list[RunData]) -> list[str]:
    base = runs[0].examples_per_sec
    rows = []
    for run in runs:
        speed = run.examples_per_sec
        rows.append((run.job_id, run.backend, run.state, run.replicas or "",
                     human_seconds(run.wall_s) if run.wall_s is not None else "", len(run.epochs) or "",
                     _num(speed), f"{speed / base:.2f}×" if speed and base else "", _usd(run.cost_usd),
                     _usd(run.cost_per_epoch), describe_interruptions(run.interruptions) or "none"))  # fmt: skip
    notes = sorted({f"{r.job_id}: {r.cost_basis}" for r in runs})
    return ["<h2>Runs</h2>", _table(["job", "backend", "state", "replicas", "wall time", "epochs", "examples/s",
                                     "speed-up", "cost (USD)", "cost/epoch", "interruptions"], rows, css_id="runs"),
            "".join(f'<p class="note">{_e(n)}</p>' for n in notes)]  # fmt: skip


def _figure(figures: dict[str, Path], name: str, caption: str) -> list[str]:
    path = figures.get(name)
    if path is None:
        return []
    data = base64.b64encode(path.read_bytes()).decode()
    return [f"<h2>{_e(caption)}</h2>", f'<img id="fig-{name}" alt="{_e(caption)}" src="data:image/png;base64,{data}">',
            f'<p class="note">Also saved as {_e(path.name)}.</p>']  # fmt: skip


def _table(columns: list[str], rows: Iterable[Iterable[Any]], css_id: str) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f'<table id="{_e(css_id)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _num(value: Any) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "" if value is None else str(value)
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def _usd(value: float | None) -> str:
    return "" if value is None else f"{value:,.4f}"


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)
