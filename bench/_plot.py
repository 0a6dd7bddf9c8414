"""The report's 2×2 figure: CLI latency, trainer examples/s, log delay and API requests by replica count."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker

from bench import _logs_table

COLOURS = {
    "cloudtrain → Vertex": "#1f77b4",
    "previous cloudtrain follower (60 s look-back)": "#9edae5",
    "gcloud ml-engine stream-logs": "#aec7e8",
    "cloudtrain → SageMaker": "#d62728",
    "cloudtrain → SageMaker, polling (before)": "#9467bd",
    "SageMaker SDK logs_for_job, 10 s poll": "#ff9896",
    "SageMaker SDK TrainingJob.wait, 5 s poll": "#ffbb78",
    "TrainingJob.wait, client in the default region": "#c7c7c7",
}


def figure(results: dict, path: Path) -> None:
    benches = results["benches"]
    fig, axes = plt.subplots(2, 2, figsize=(15, 11.5))
    _cli(axes[0][0], _data(benches, "cli"))
    _trainer(axes[0][1], _data(benches, "trainer"))
    recs = _logs_table.records(benches.get("vertex_late"), benches.get("sagemaker_logs"))
    _by_replicas(axes[1][0], recs, "p50", "seconds (log scale)", "Log delay, readable → printed, median")
    _by_replicas(axes[1][1], recs, "per_min", "requests per minute (log scale)", "Log API requests per minute")
    handles, labels = axes[1][1].get_legend_handles_labels()
    if labels:
        fig.legend(
            handles,
            labels,
            loc="lower center",
            ncol=3,
            fontsize=9,
            frameon=False,
            title="log followers, virtual clock (hatched: stopped by the bench, it never returned)",
        )
    meta = results["meta"]
    m = meta["machine"]
    fig.suptitle(
        f"cloudtrain benchmarks{' (quick)' if meta.get('quick') else ''} — {meta['started']}, "
        f"{m['cpu']}, {m['cores']} cores, commit {m['git_commit'].split()[0]}",
        fontsize=12,
    )
    fig.tight_layout(rect=(0, 0.08 if recs else 0, 1, 0.97))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _data(benches: dict, name: str) -> dict:
    return (benches.get(name) or {}).get("data") or {}


def _empty(ax, title: str) -> None:
    ax.set_title(title)
    ax.text(
        0.5,
        0.5,
        "not measured in this run: see its section of the report",
        ha="center",
        va="center",
        transform=ax.transAxes,
        color="grey",
    )
    ax.set_xticks([])
    ax.set_yticks([])


def _barh(ax, labels: list[str], values: list[float], colours: list[str], unit: str = "") -> None:
    y = range(len(labels))
    ax.barh(list(y), values, color=colours)
    ax.set_yticks(list(y), labels, fontsize=8)
    ax.invert_yaxis()
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:,.0f}{unit}" if v >= 100 else f" {v:.1f}{unit}", va="center", fontsize=8)


def _cli(ax, data: dict) -> None:
    title = "CLI latency, median of fresh processes"
    if not data:
        return _empty(ax, title)
    labels = [name.replace("python -c ", "") for name in data]
    values = [r["median_s"] * 1000 for r in data.values()]
    colours = ["#1f77b4" if name.startswith("cloudtrain") else "#7f7f7f" for name in data]
    _barh(ax, labels, values, colours, " ms")
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("milliseconds (log scale); blue: cloudtrain, grey: importing an SDK / bare interpreter")
    ax.set_xlim(right=max(values) * 6)
    ax.set_title(title)


def _trainer(ax, data: dict) -> None:
    title = "Trainer throughput on this CPU"
    rows = data.get("rows") or []
    if not rows:
        return _empty(ax, title)
    labels = [r["case"] for r in rows]
    colours = [
        "#7f7f7f" if ": fit, " in r["case"] else "#2ca02c" if "bfloat16" in r["case"] else "#1f77b4" for r in rows
    ]
    values = [r["value"] for r in rows]
    _barh(ax, labels, values, colours)
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,g}"))
    ax.set_xlim(right=max(values) * 3)
    ax.set_xlabel("examples/s, log scale; grey: Keras fit, green: mixed_bfloat16")
    ax.set_title(title)


def _by_replicas(ax, recs: list[dict], key: str, ylabel: str, title: str) -> None:
    if not recs:
        return _empty(ax, title)
    followers = [f for f in COLOURS if any(r["follower"] == f for r in recs)]
    counts = sorted({r["replicas"] for r in recs})
    width = 0.8 / len(followers)
    for i, follower in enumerate(followers):
        for j, n in enumerate(counts):
            rec = next((r for r in recs if r["follower"] == follower and r["replicas"] == n), None)
            x = j + (i - (len(followers) - 1) / 2) * width
            if rec is None:
                continue
            value = rec[key]
            if value is None or value <= 0:
                ax.text(x, 0.55, "printed nothing", rotation=90, ha="center", va="bottom", fontsize=7, color="grey")
                continue
            ax.bar(
                x,
                value,
                width,
                color=COLOURS[follower],
                label=follower if j == 0 else None,
                hatch="//" if rec["note"] else None,
                edgecolor="black" if rec["note"] else None,
            )
            ax.text(x, value, f"{value:,.0f}" if value >= 10 else f"{value:.1f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(counts)), [f"{n} replica{'s' if n > 1 else ''}" for n in counts])
    ax.set_yscale("log")
    top = max((r[key] for r in recs if r[key]), default=1)
    ax.set_ylim(0.5, top * 4)
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,g}"))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
