"""The report page as people read it: charts first, long tables folded, a speed-up only to compare,
a sweep's metric against each parameter, numbers to 4 significant digits."""

from __future__ import annotations

import re

from cloudtrain.reporting import figures, page
from cloudtrain.reporting.collect import RunData


def _run(job_id: str, epochs: int, rate: float) -> RunData:
    run = RunData(job_id, "local", "SUCCEEDED", None, None)
    run.epochs = [
        {"epoch": n, "loss": 1 / n, "val_accuracy": 0.9 + n / 1e4 + 1e-9, "examples_per_sec": rate}
        for n in range(1, epochs + 1)
    ]
    return run


def _runs_header(html: str) -> list[str]:
    found = re.search(r'<table id="runs"><thead><tr>(.*?)</tr>', html)
    assert found is not None, "the report has no runs table"
    head = found.group(1)
    return re.findall(r"<th>(.*?)</th>", head)


def test_a_sixty_epoch_run_shows_its_charts_before_a_folded_table(tmp_path):
    run = _run("long-run", 60, 1234.5678)
    html = page.write([run], figures.draw_all([run], tmp_path), tmp_path).read_text()
    assert html.index('id="fig-epochs"') < html.index('id="epochs-long-run"')
    assert '<details><summary>60 rows</summary><table id="epochs-long-run">' in html
    assert "<td>0.9001</td>" in html and "0.900100001" not in html  # 4 significant digits
    assert "<td>1,235</td>" in html  # examples/s


def test_a_short_table_is_not_folded(tmp_path):
    run = _run("short-run", 20, 10.0)
    html = page.write([run], {}, tmp_path).read_text()
    assert '<table id="epochs-short-run">' in html and "<details>" not in html


def test_speed_up_only_when_there_is_something_to_compare(tmp_path):
    one = page.write([_run("a", 2, 100.0)], {}, tmp_path).read_text()
    assert "speed-up" not in _runs_header(one) and "×</td>" not in one
    two = page.write([_run("a", 2, 100.0), _run("b", 2, 187.3)], {}, tmp_path).read_text()
    assert "speed-up" in _runs_header(two)
    assert "<td>1×</td>" in two and "<td>1.873×</td>" in two


def _sweep() -> RunData:
    run = RunData("lr-sweep", "local", "SUCCEEDED", None, None, metric="val_accuracy")
    params = [(0.0001694044709524275, 32, "adam", 0.91), (0.0123, 64, "sgd", 0.95), (0.2, 128, "adam", 0.5)]
    run.trials = [
        {
            "trial": str(i),
            "state": "COMPLETE",
            "value": v,
            "best": v == 0.95,
            "params": {"lr": lr, "batch-size": bs, "optimizer": opt},
        }
        for i, (lr, bs, opt, v) in enumerate(params)
    ]
    return run


def test_a_sweep_plots_its_metric_against_each_parameter():
    fig = figures.trials_figure([_sweep()])
    axes = fig.axes
    assert [ax.get_xlabel() for ax in axes] == ["batch-size", "lr", "optimizer"]
    assert {ax.get_ylabel() for ax in axes} == {"val_accuracy"}
    lr_points = axes[1].collections[0].get_offsets()
    assert [float(x) for x, _ in lr_points] == [0.0001694044709524275, 0.0123, 0.2]
    assert axes[1].get_xscale() == "log"  # 0.00017 … 0.2: three decades
    star = axes[1].collections[1].get_offsets()
    assert [(float(x), float(y)) for x, y in star] == [(0.0123, 0.95)]


def test_a_sweep_axis_follows_the_parameters_scale():
    """``scale: log`` draws on a log axis even over less than two decades (0.01 … 0.1), and a linear one stays
    linear over three; a scale not known (a cloud sweep whose config is gone) is judged by the values."""
    run = _sweep()
    for trial, lr in zip(run.trials, (0.01, 0.03, 0.1), strict=True):
        trial["params"]["lr"] = lr
    assert figures.trials_figure([run]).axes[1].get_xscale() == "linear"  # unknown, one decade: linear
    run.scales = {"lr": "log", "batch-size": "linear"}
    axes = figures.trials_figure([run]).axes
    assert axes[1].get_xscale() == "log" and axes[0].get_xscale() == "linear"
    wide = _sweep()
    wide.scales = {"lr": "linear"}
    assert figures.trials_figure([wide]).axes[1].get_xscale() == "linear"  # three decades, but linear as swept


def test_a_sweep_table_names_the_metric_and_rounds_parameters(tmp_path):
    html = page.write([_sweep()], {}, tmp_path).read_text()
    assert "<th>val_accuracy</th>" in html
    assert "<td>0.0001694</td>" in html and "0.0001694044709524275" not in html


def _runs_rows(html: str) -> list[dict[str, str]]:
    columns = _runs_header(html)
    body = re.search(r'<table id="runs">.*?<tbody>(.*?)</tbody>', html)
    assert body is not None
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body.group(1))]
    return [dict(zip(columns, row, strict=True)) for row in rows]


def test_a_comparison_says_what_each_run_ran_with_its_experiment_and_final_and_best_metric(tmp_path):
    """``report A B`` of two runs of one experiment that differ in --lr: the args that differ come first in
    the runs table (what they share is one note), with the experiment and the final and best val_accuracy."""
    first, second = _run("lr-a", 3, 100.0), _run("lr-b", 3, 120.0)
    for run, lr in ((first, "0.1"), (second, "0.01")):
        run.args = ["--epochs=3", f"--lr={lr}", "--batch_size=64"]
        run.experiment = "lr-study"
    first.epochs[1]["val_accuracy"] = 0.97  # its best epoch is not its last
    first.metrics = {"val_accuracy": 0.9003}
    html = page.write([first, second], figures.draw_all([first, second], tmp_path), tmp_path).read_text()
    columns = _runs_header(html)
    assert columns[:5] == ["job", "experiment", "args (what differs)", "final val_accuracy", "best val_accuracy"]
    rows = _runs_rows(html)
    assert [r["args (what differs)"] for r in rows] == ["--lr=0.1", "--lr=0.01"]
    assert [r["experiment"] for r in rows] == ["lr-study", "lr-study"]
    assert (rows[0]["final val_accuracy"], rows[0]["best val_accuracy"]) == ("0.9003", "0.97")
    assert (rows[1]["final val_accuracy"], rows[1]["best val_accuracy"]) == ("0.9003", "0.9003")
    assert "args of every run: --epochs=3 --batch_size=64" in html


def test_a_chart_with_nothing_for_a_run_says_why(tmp_path):
    drawn, silent = _run("has-epochs", 3, 100.0), RunData("no-epochs", "local", "FAILED", None, None)
    html = page.write([drawn, silent], figures.draw_all([drawn, silent], tmp_path), tmp_path).read_text()
    assert "no-epochs: its log has no {&quot;event&quot;: &quot;epoch&quot;} lines to draw" in html
    assert "has-epochs: no cost per epoch: not priced (local run)" in html  # the cost chart's empty bars
    alone = page.write([silent], figures.draw_all([silent], tmp_path), tmp_path).read_text()
    assert "Loss and metric per epoch" in alone and "why-epochs" in alone  # no chart at all: still the reason


def test_a_sweeps_report_row_carries_the_scales_of_its_parameters():
    from cloudtrain.reporting import collect
    from cloudtrain.sweeps.results import SweepResults, TrialRow

    table = SweepResults(
        "s-1",
        "val_accuracy",
        "maximize",
        "SUCCEEDED",
        (TrialRow("0", "COMPLETE", 0.9, {"lr": 0.01}),),
        scales={"lr": "log"},
    )
    assert collect.from_sweep("s-1", "local", table).scales == {"lr": "log"}
