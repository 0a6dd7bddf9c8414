"""Phases from every source, the live status numbers, the live line on a terminal and never on a pipe."""

from __future__ import annotations

import datetime as dt
import io
import json
from typing import cast

from cloudtrain.backends.base import HandleDefaults, JobHandle, JobState, JobStatus, LogLine
from cloudtrain.backends.sagemaker.phases import sagemaker_marks
from cloudtrain.following import timeline
from cloudtrain.following.progress import Progress, phase_of

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def event(kind: str, **fields) -> str:
    return json.dumps({"event": kind, **fields})


def test_phases_follow_each_other_and_the_last_ends_with_the_job() -> None:
    phases = timeline.build({"queued": at(0), "provisioning": at(30), "training": at(100)}, at(160))
    assert [(p.name, p.seconds) for p in phases] == [("queued", 30), ("provisioning", 70), ("training", 60)]


def test_a_mark_before_the_one_before_it_is_moved_up_clock_skew() -> None:
    phases = timeline.build({"provisioning": at(10), "installing package": at(5)}, at(20))
    assert [(p.name, p.seconds) for p in phases] == [("provisioning", 0), ("installing package", 10)]


def test_sagemaker_transitions_become_phases() -> None:
    desc = {
        "CreationTime": at(0),
        "SecondaryStatusTransitions": [
            {"Status": "Starting", "StartTime": at(5)},
            {"Status": "Downloading", "StartTime": at(60)},
            {"Status": "DownloadingTrainingImage", "StartTime": at(80)},
            {"Status": "Training", "StartTime": at(200)},
            {"Status": "Uploading", "StartTime": at(900)},
            {"Status": "Completed", "StartTime": at(930)},
        ],
    }
    marks = sagemaker_marks(desc)
    lines = [LogLine(at(210), "algo-1", "cloudtrain: pip install …"), LogLine(at(260), "algo-1", event("plan"))]
    phases = timeline.build(timeline.merge(marks, timeline.log_marks(lines)), at(930))
    assert [(p.name, p.seconds) for p in phases] == [
        ("queued", 5),
        ("provisioning", 75),
        ("pulling image", 120),
        ("installing package", 60),
        ("training", 640),
        ("uploading", 30),
    ]


def test_vertex_status_and_log_marks() -> None:
    status = JobStatus(
        "1",
        "projects/p/locations/r/customJobs/1",
        JobState.SUCCEEDED,
        "JOB_STATE_SUCCEEDED",
        created=at(0),
        ended=at(500),
        first_phase="provisioning",
        started=at(120),  # Vertex AI's start_time
    )
    lines = [
        LogLine(at(180), "workerpool0-0", "Processing /tmp/trainer.tar.gz"),
        LogLine(at(240), "workerpool0-0", event("plan")),
        LogLine(at(470), "workerpool0-0", event("done")),
    ]
    shares = timeline.cost_shares(timeline.of_run(status, timeline.log_marks(lines)), cost_per_hour=3.6)
    assert [(r["phase"], r["seconds"]) for r in shares] == [
        ("provisioning", 120),
        ("pulling image", 60),
        ("installing package", 60),
        ("training", 230),
        ("uploading", 30),
    ]
    assert shares[0]["cost_usd"] == 0.12 and abs(sum(r["share"] for r in shares) - 1) < 1e-3


def test_progress_from_events() -> None:
    progress = Progress(cost_per_hour=2.0, started=0.0, clock=lambda: 1800.0)
    progress.set_phase("provisioning")  # billing starts at 1800 s
    progress(LogLine(at(0), "chief", "Installing collected packages: trainer"))
    assert progress.snapshot().phase == "installing package"
    progress(LogLine(at(1), "chief", event("plan", epochs=4)))
    for n in (1, 2):
        progress(
            LogLine(
                at(n),
                "chief",
                event(
                    "epoch",
                    epoch=n,
                    epochs=4,
                    loss=1 / n,
                    val_accuracy=0.5 + n / 10,
                    examples_per_sec=1000.0 * n,
                    epoch_time_s=10.0,
                    steps=50,
                ),
            )
        )
    progress.clock = lambda: 1800.0 + 360
    snap = progress.snapshot()
    assert (snap.phase, snap.epoch, snap.epochs, snap.steps, snap.loss) == ("training", 2, 4, 100, 0.5)
    assert snap.metric == ("val_accuracy", 0.7) and snap.examples_per_sec == 2000.0 and snap.eta_s == 20.0
    assert snap.elapsed_s == 2160 and snap.cost_usd is not None
    assert abs(snap.cost_usd - 0.2) < 1e-9  # 360 s billed at $2/h
    line = snap.line()
    assert "epoch 2/4" in line and "val_accuracy 0.7 · " in line and "ETA 20 s" in line and "$0.20" in line


def test_code_that_prints_no_events_still_gives_phase_elapsed_and_cost() -> None:
    progress = Progress(cost_per_hour=1.0, started=0.0, clock=lambda: 0.0)
    progress.set_phase("provisioning")
    progress.clock = lambda: 7200.0
    progress(LogLine(at(0), "algo-1", "hello from my own script"))
    snap = progress.snapshot()
    assert snap.line() == "training · elapsed 2 h 0 min · $2.00"  # its own line: it trains (the timeline's rule)


def test_phase_before_the_first_line() -> None:
    from google.cloud.aiplatform_v1.types import CustomJob

    from cloudtrain.backends.sagemaker.jobs import to_status as sagemaker_status
    from cloudtrain.backends.vertex.jobs import to_status as vertex_status

    def vertex(native):
        return vertex_status(CustomJob(name="projects/p/locations/us-central1/customJobs/1", state=native))

    def sagemaker(secondary):
        desc = {"TrainingJobName": "j", "TrainingJobStatus": "InProgress", "SecondaryStatus": secondary}
        return sagemaker_status(desc, "us-east-1")

    assert phase_of(vertex("JOB_STATE_QUEUED")) == "queued"
    assert phase_of(vertex("JOB_STATE_PENDING")) == "provisioning"
    assert phase_of(sagemaker("DownloadingTrainingImage")) == "pulling image"
    assert phase_of(JobStatus("j", "j", JobState.RUNNING, "running")) == "installing package"


class _Handle(HandleDefaults):
    job_id = "job-1"

    def __init__(self):
        self.lines = (
            [LogLine(at(0), "chief", event("plan", epochs=3))]
            + [
                LogLine(
                    at(n),
                    "chief",
                    event("epoch", epoch=n, epochs=3, loss=0.1, examples_per_sec=500.0, epoch_time_s=1.0),
                )
                for n in (1, 2, 3)
            ]
            + [LogLine(at(4), "chief", event("done"))]
        )

    def logs(self, follow=False):
        yield from self.lines

    def wait(self):
        return JobStatus(
            "job-1",
            "/runs/job-1",
            JobState.SUCCEEDED,
            "succeeded",
            created=at(0),
            ended=at(5),
            details={"wall_time_s": 5.0, "contract": "vertex"},
            first_phase="installing package",
        )


def _follow(terminal: bool, tmp_path, monkeypatch) -> str:
    from rich.console import Console

    from cloudtrain.cli._follow import follow

    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path))
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=120)
    follow(
        console,
        cast(JobHandle, _Handle()),
        cancel_on_interrupt=False,
        progress=Progress(cost_per_hour=None, started=0.0),
    )
    return out.getvalue()


def test_the_live_line_is_drawn_on_a_terminal_and_never_on_a_pipe(tmp_path, monkeypatch) -> None:
    piped = _follow(False, tmp_path, monkeypatch)
    assert "\x1b" not in piped and "\r" not in piped and "ex/s" not in piped
    assert "timeline" in piped and "installing package" in piped and "training" in piped
    shown = _follow(True, tmp_path, monkeypatch)
    assert "training · epoch" in shown and "500 ex/s" in shown
    saved = json.loads((tmp_path / "runs" / "job-1.json").read_text())
    assert [p["phase"] for p in saved["timeline"]] == ["installing package", "training", "uploading"]


def test_the_live_line_takes_the_epoch_total_from_the_jobs_args_when_events_give_none() -> None:
    from cloudtrain.following.events import epochs_in_args

    assert epochs_in_args(("--data=digits", "--epochs=3")) == 3 and epochs_in_args(("--epochs", "7")) == 7
    assert epochs_in_args(("--epochs-per-cycle=2",)) is None
    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 10.0, epochs=epochs_in_args(("--epochs=3",)))
    progress(LogLine(at(1), "chief", json.dumps({"event": "epoch", "epoch": 2, "loss": 0.5})))
    assert progress.snapshot().line().startswith("training · epoch 2/3 · loss 0.5")
    bare = Progress(cost_per_hour=None, started=0.0, clock=lambda: 10.0)
    bare(LogLine(at(1), "chief", json.dumps({"event": "epoch", "epoch": 2})))
    assert bare.snapshot().line().startswith("training · epoch 2 · ") and "None" not in bare.snapshot().line()
