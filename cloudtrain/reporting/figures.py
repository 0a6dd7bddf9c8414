"""The report's figures, drawn with matplotlib (Agg, no display) into PNG files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cloudtrain.errors import UsageError
from cloudtrain.following.timeline import PHASES
from cloudtrain.reporting.collect import RunData

_COLOURS = {
    "queued": "#9e9e9e",
    "provisioning": "#64b5f6",
    "pulling image": "#4db6ac",
    "installing package": "#ffb74d",
    "starting TensorFlow": "#fff176",
    "training": "#81c784",
    "uploading": "#ba68c8",
}


def pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise UsageError(
            "the run report draws with matplotlib, which is not installed", hint="pip install 'cloudtrain[report]'"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def draw_all(runs: list[RunData], out: Path) -> dict[str, Path]:
    """Every figure that has data; name → PNG path."""
    figures = {}
    if any(r.phases for r in runs):
        figures["timeline"] = _timeline(runs, out / "timeline.png")
    if any(r.epochs for r in runs):
        figures["epochs"] = _epochs(runs, out / "epochs.png")
    if any(r.rates for r in runs):
        figures["throughput"] = _throughput(runs, out / "throughput.png")
    if len(runs) > 1 and any(r.examples_per_sec for r in runs):
        figures["comparison"] = _comparison(runs, out / "comparison.png")
    if any(r.trials for r in runs):
        figures["trials"] = _save(trials_figure(runs), out / "trials.png")
    return figures


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot().close(fig)
    return path


def _timeline(runs: list[RunData], path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.6 * len(runs)))
    for row, run in enumerate(runs):
        left = 0.0
        for phase in run.phases:
            ax.barh(
                row,
                phase["seconds"],
                left=left,
                color=_COLOURS.get(phase["phase"], "#ccc"),
                label=phase["phase"],
                edgecolor="white",
            )
            left += phase["seconds"]
        for at, back in run.interruption_offsets():  # hatched red: no training until the restart
            ax.barh(
                row,
                (back if back is not None else left) - at,
                left=at,
                height=0.9,
                color="none",
                edgecolor="#d32f2f",
                hatch="////",
                label="interrupted",
            )
            ax.plot([at], [row], marker="v", color="#d32f2f", markersize=8)
    handles = {h.get_label(): h for h in ax.get_legend_handles_labels()[0]}
    order = [handles[p] for p in (*PHASES, "interrupted") if p in handles]
    ax.legend(
        order,
        [h.get_label() for h in order],
        ncol=7,
        fontsize=8,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        frameon=False,
    )
    ax.set_yticks(range(len(runs)), [r.job_id for r in runs], fontsize=8)
    ax.set_xlabel("seconds since the job was created")
    fig.set_figheight(1.6 + 0.6 * len(runs))
    return _save(fig, path)


def _epochs(runs: list[RunData], path: Path) -> Path:
    plt = pyplot()
    fig, (loss_ax, metric_ax) = plt.subplots(1, 2, figsize=(10, 3.6))
    for run in runs:
        xs = [e.get("epoch") for e in run.epochs]
        loss_ax.plot(xs, [e.get("loss") for e in run.epochs], marker="o", label=f"{run.job_id} loss")
        if any(e.get("val_loss") is not None for e in run.epochs):
            loss_ax.plot(
                xs, [e.get("val_loss") for e in run.epochs], marker=".", linestyle="--", label=f"{run.job_id} val_loss"
            )
        for key in ("accuracy", "val_accuracy"):
            if any(e.get(key) is not None for e in run.epochs):
                metric_ax.plot(xs, [e.get(key) for e in run.epochs], marker="o", label=f"{run.job_id} {key}")
    loss_ax.set(xlabel="epoch", ylabel="loss", title="Loss per epoch")
    metric_ax.set(xlabel="epoch", ylabel="accuracy", title="Metric per epoch")
    for ax in (loss_ax, metric_ax):
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    return _save(fig, path)


def _throughput(runs: list[RunData], path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 3.6))
    for run in runs:
        for replica, points in sorted(run.rates.items()):
            ax.plot([t for t, _ in points], [v for _, v in points], marker="o", label=f"{run.job_id} · {replica}")
    ax.set(xlabel="training time (s)", ylabel="examples/s", title="Throughput per replica over time")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def _comparison(runs: list[RunData], path: Path) -> Path:
    plt = pyplot()
    fig, (speed_ax, cost_ax) = plt.subplots(1, 2, figsize=(10, 3.4))
    names = [r.job_id for r in runs]
    base = runs[0].examples_per_sec or 1.0
    speed_ax.bar(names, [(r.examples_per_sec or 0) / base for r in runs], color="#81c784")
    speed_ax.set(ylabel=f"speed-up vs {names[0]}", title="Steady examples/s, relative")
    cost_ax.bar(names, [r.cost_per_epoch or 0 for r in runs], color="#64b5f6")
    for x, run in enumerate(runs):  # a run with no price says so where its bar would be
        if run.cost_per_epoch is None:
            cost_ax.text(x, 0, run.cost_basis, rotation=90, ha="center", va="bottom", fontsize=7, color="#666")
    cost_ax.set(ylabel="USD per epoch", title="Cost per epoch (catalog list price × billed time)")
    for ax in (speed_ax, cost_ax):
        ax.tick_params(axis="x", labelsize=7, rotation=15)
    return _save(fig, path)


def _number(value: Any) -> Any:
    """A reported parameter as a number where it is one (SageMaker's are strings), for a numeric axis."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def trials_figure(runs: list[RunData]) -> Any:
    """The metric against each swept parameter, a panel each on its own (log or linear) scale, the best starred."""
    plt = pyplot()
    swept = [r for r in runs if r.trials]
    params = sorted({k for r in swept for t in r.trials for k in t.get("params", {})}) or ["trial"]
    fig, axes = plt.subplots(1, len(params), figsize=(max(9, 4.2 * len(params)), 3.6), squeeze=False)
    metrics = sorted({r.metric or "value" for r in swept})
    for ax, param in zip(axes[0], params, strict=True):  # one panel per parameter
        xs_all: list[float | str] = []
        for run in swept:
            done = [
                t
                for t in run.trials
                if t.get("value") is not None and (param == "trial" or param in t.get("params", {}))
            ]  # a categorical one: its values as labels
            xs = [str(t["trial"]) if param == "trial" else _number(t["params"][param]) for t in done]
            xs_all += xs
            ax.scatter(xs, [t["value"] for t in done], label=run.job_id)
            best = [(x, t["value"]) for x, t in zip(xs, done, strict=True) if t.get("best")]
            ax.scatter(
                [x for x, _ in best],
                [v for _, v in best],
                marker="*",
                s=220,
                color="gold",
                edgecolors="black",
                zorder=3,
            )
        positive = [x for x in xs_all if isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0]
        scale = next((r.scales[param] for r in swept if param in r.scales), None)
        if scale == "log" or (
            scale is None and positive and len(positive) == len(xs_all) and max(positive) / min(positive) > 100
        ):
            ax.set_xscale("log")
        elif scale == "reverse_log" and positive and len(positive) == len(xs_all) and max(positive) < 1:
            ax.set_xscale("logit")  # dense near 1, as reverse_log samples
        ax.set(xlabel=param, ylabel=" / ".join(metrics), title=f"{' / '.join(metrics)} by {param} (★ best)")
        ax.grid(alpha=0.3)
    return fig
