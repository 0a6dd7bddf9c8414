"""The report's numbers, read back from the HTML it writes and the figures it draws: each epoch's own
values (not the last epoch's repeated, not shifted by one), the steady examples/s, and a sweep's trials
with the best one by the sweep's goal."""

from __future__ import annotations

import datetime as dt
import json
from html.parser import HTMLParser
from typing import Any

import pytest

from cloudtrain.backends.base import JobState, JobStatus, LogLine
from cloudtrain.reporting import collect, figures, page

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)
EPOCHS: list[dict[str, Any]] = [  # each epoch different in every figure, so a repeat or a shift shows
    {
        "epoch": 1,
        "loss": 0.9,
        "accuracy": 0.5,
        "val_loss": 0.95,
        "val_accuracy": 0.45,
        "examples_per_sec": 800.0,
        "epoch_time_s": 12.0,
    },
    {
        "epoch": 2,
        "loss": 0.6,
        "accuracy": 0.7,
        "val_loss": 0.65,
        "val_accuracy": 0.66,
        "examples_per_sec": 1500.0,
        "epoch_time_s": 8.0,
    },
    {
        "epoch": 3,
        "loss": 0.3,
        "accuracy": 0.85,
        "val_loss": 0.4,
        "val_accuracy": 0.81,
        "examples_per_sec": 1700.0,
        "epoch_time_s": 7.5,
    },
]


class Tables(HTMLParser):
    """Every ``<table id=…>`` as a list of rows of cell texts (the header row first)."""

    def __init__(self, html: str):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._table = self.tables.setdefault(dict(attrs)["id"], [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            assert self._table is not None  # a cell is inside a table
            self._table[-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def event(seconds: float, kind: str, source: str = "chief", **fields) -> LogLine:
    return LogLine(T0 + dt.timedelta(seconds=seconds), source, json.dumps({"event": kind, **fields}))


def run_data() -> collect.RunData:
    lines = [event(5, "plan", epochs=3, replicas=2)]
    for i, e in enumerate(EPOCHS):
        lines.append(event(10 + 10 * i, "epoch", **e))
        lines.append(event(10 + 10 * i, "epoch", "worker-0", replica="worker-0", **{**e, "loss": 9.0}))
    lines.append(event(45, "done"))
    status = JobStatus(
        "run-1",
        "/runs/run-1",
        JobState.SUCCEEDED,
        "succeeded",
        created=T0,
        ended=T0 + dt.timedelta(seconds=50),
        details={"wall_time_s": 50.0, "contract": "vertex"},
        first_phase="installing package",
    )
    return collect.from_parts(status, lines, "local")


@pytest.fixture
def kept_figures(monkeypatch):
    """matplotlib's figures stay open after the report draws them, to read their data back."""
    plt = figures.pyplot()
    plt.close("all")
    monkeypatch.setattr(plt, "close", lambda *a, **k: None)
    yield plt
    monkeypatch.undo()
    plt.close("all")


def test_each_epochs_own_values_in_the_table_and_the_summary(tmp_path) -> None:
    data = run_data()
    assert [e["epoch"] for e in data.epochs] == [1, 2, 3]  # the chief's, not the worker's (loss 9.0)
    html = page.write([data], {}, tmp_path).read_text()
    tables = Tables(html).tables
    epochs = tables["epochs-run-1"]
    assert epochs[0] == ["epoch", "loss", "accuracy", "val_loss", "val_accuracy", "examples_per_sec", "epoch_time_s"]
    assert epochs[1:] == [
        ["1", "0.9", "0.5", "0.95", "0.45", "800", "12"],
        ["2", "0.6", "0.7", "0.65", "0.66", "1,500", "8"],
        ["3", "0.3", "0.85", "0.4", "0.81", "1,700", "7.5"],
    ]
    runs = dict(zip(tables["runs"][0], tables["runs"][1], strict=True))
    assert runs["epochs"] == "3" and runs["replicas"] == "2"
    assert runs["examples/s"] == "1,700"  # the median of the epochs after the first: 1500, 1700 → the upper
    assert runs["wall time"] == "50 s"


def test_each_epochs_own_values_in_the_charts(tmp_path, kept_figures) -> None:
    drawn = figures.draw_all([run_data()], tmp_path)
    assert {"epochs", "throughput", "timeline"} <= drawn.keys()
    charts = [kept_figures.figure(n) for n in kept_figures.get_fignums()]
    by_title = {ax.get_title(): ax for fig in charts for ax in fig.axes if ax.get_title()}
    lines = {
        line.get_label(): (list(line.get_xdata()), list(line.get_ydata()))
        for ax in by_title.values()
        for line in ax.get_lines()
    }
    assert lines["run-1 loss"] == ([1, 2, 3], [0.9, 0.6, 0.3])
    assert lines["run-1 val_loss"] == ([1, 2, 3], [0.95, 0.65, 0.4])
    assert lines["run-1 accuracy"] == ([1, 2, 3], [0.5, 0.7, 0.85])
    assert lines["run-1 val_accuracy"] == ([1, 2, 3], [0.45, 0.66, 0.81])
    # throughput: each replica over its own training time (the epochs' times added up)
    assert lines["run-1 · chief"] == ([12.0, 20.0, 27.5], [800.0, 1500.0, 1700.0])
    assert lines["run-1 · worker-0"] == ([12.0, 20.0, 27.5], [800.0, 1500.0, 1700.0])


@pytest.mark.server
def test_a_sweeps_report_lists_its_trials_and_stars_the_best_by_its_goal(
    aws, tmp_path, monkeypatch, capsys, kept_figures
) -> None:
    from cloudtrain.cli import main
    from tests.conftest import REPO
    from tests.fakes.aws import TUNING_TRIALS, add_tuning_actions
    from tests.sweeps.test_sweep_requests import SAGEMAKER

    add_tuning_actions()
    aws.client("s3", "us-east-1").create_bucket(Bucket="my-bucket")
    args = ["submit", "-c", str(REPO / "job_configs" / "sweep.yaml"), "--detach"]
    for override in [*SAGEMAKER, "sweep.goal=minimize", "sweep.metric=val_loss"]:
        args += ["--set", override]
    assert main(args) == 0
    job_id = capsys.readouterr().out.split("Sweep ", 1)[1].split()[0]

    def trial(n: int, status: str, value: float | None, lr: str) -> dict:
        out = {
            "TrainingJobName": f"{job_id}-00{n}-x",
            "TrainingJobArn": f"arn:x:{n}",
            "CreationTime": 0,
            "TrainingJobStatus": status,
            "TunedHyperParameters": {"lr": lr},
        }
        if value is not None:
            out["FinalHyperParameterTuningJobObjectiveMetric"] = {"MetricName": "val_loss", "Value": value}
        return out

    TUNING_TRIALS[job_id] = [
        trial(1, "Completed", 0.31, "0.01"),
        trial(2, "Completed", 0.12, "0.001"),
        trial(3, "Completed", 0.45, "0.05"),
        trial(4, "Failed", None, "0.09"),
    ]
    assert main(["report", job_id, "--out", str(tmp_path / "report"), "-o", "json"]) == 0
    written = json.loads(capsys.readouterr().out)
    rows = Tables((tmp_path / "report" / "report.html").read_text()).tables[f"trials-{job_id}"]
    assert rows[0] == ["trial", "state", "val_loss", "lr"]  # the column is named for the metric
    assert rows[1:] == [
        [f"{job_id}-001-x", "COMPLETE", "0.31", "0.01"],
        [f"★ {job_id}-002-x", "COMPLETE", "0.12", "0.001"],
        [f"{job_id}-003-x", "COMPLETE", "0.45", "0.05"],
        [f"{job_id}-004-x", "FAIL", "", "0.09"],
    ]
    assert "trials" in written["figures"]
    html = (tmp_path / "report" / "report.html").read_text()
    runs = dict(zip(*Tables(html).tables["runs"][:2], strict=True))
    assert (runs["job"], runs["backend"], runs["state"]) == (
        job_id,
        "sagemaker",
        "Completed",
    )  # the tuning job's own state
    assert f"{job_id}: see each trial" in html  # a sweep's cost is each trial's
    stars = [
        c
        for n in kept_figures.get_fignums()
        for ax in kept_figures.figure(n).axes
        for c in ax.collections
        if ax.get_title() == "val_loss by lr (★ best)"
    ]
    points = [[tuple(p) for p in c.get_offsets()] for c in stars]
    assert [(0.001, 0.12)] in [
        [(float(x), float(y)) for x, y in pts] for pts in points
    ]  # the gold star: trial 2 (lr 0.001)


def test_interruptions_on_the_timeline_are_seconds_since_created_and_an_open_one_has_no_end() -> None:
    at = lambda s: (T0 + dt.timedelta(seconds=s)).isoformat()  # noqa: E731
    items = [{"at": at(100), "resumed_at": at(400)}, {"at": at(900), "resumed_at": None}, {"at": None}]
    data = collect.RunData("r", "vertex", "SUCCEEDED", T0, None, interruptions={"items": items})
    assert data.interruption_offsets() == [(100.0, 400.0), (900.0, None)]
    assert (
        collect.RunData("r", "vertex", "SUCCEEDED", None, None, interruptions={"items": items}).interruption_offsets()
        == []
    )
    assert (
        collect.RunData("r", "vertex", "SUCCEEDED", T0, None, interruptions={"count": 0}).interruption_offsets() == []
    )
