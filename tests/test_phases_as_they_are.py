"""Phases as they are (issue 40): a local run starts TensorFlow (it installs nothing once its environment
is there) and uploads nothing; the live line, the summary and the report name one moment for the start
of training; Ctrl-C on a package that saves nothing does not promise a checkpoint."""

from __future__ import annotations

import datetime as dt
import json

from cloudtrain.backends.base import JobState, JobStatus, LogLine
from cloudtrain.backends.local.job import FIRST_PHASE
from cloudtrain.following import timeline
from cloudtrain.following.progress import Progress

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def local_status(state: JobState = JobState.RUNNING, end: float | None = None) -> JobStatus:
    """A local run's status as its backend reports it (the fields the phases read)."""
    return JobStatus(
        "points-1",
        "/runs/points-1",
        state,
        "running" if state is JobState.RUNNING else "succeeded",
        created=at(0),
        ended=None if end is None else at(end),
        details={"uploads_outputs": False},
        first_phase=FIRST_PHASE,
        phase=FIRST_PHASE if state is JobState.RUNNING else None,
    )


#: A user's Keras package under --local: TensorFlow's own start-up log while it imports, then the code's
#: progress bar, then its epoch events, then done.
LINES = [
    (0.0, "cloudtrain", "vertex contract, 1 replica; environment … (reused)"),
    (9.0, "chief", "2026-01-01 12:00:09.100000: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on."),
    (11.0, "chief", "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"),
    (12.0, "chief", "I0000 00:00:1767268812.000000   4242 cpu_feature_guard.cc:210] To enable AVX2 FMA, rebuild"),
    (24.0, "chief", "Epoch 1/3"),
    (30.0, "chief", json.dumps({"event": "epoch", "epoch": 1, "epochs": 3, "loss": 0.5, "examples_per_sec": 500.0})),
    (36.0, "chief", json.dumps({"event": "epoch", "epoch": 2, "epochs": 3, "loss": 0.4, "examples_per_sec": 520.0})),
    (42.0, "chief", json.dumps({"event": "done", "loss": 0.3})),
]


def _watch(lines=LINES) -> tuple[Progress, list[tuple[float, str]]]:
    """Feed the lines to the live line as they arrive; each line's phase after it."""
    progress = Progress(cost_per_hour=None, started=T0.timestamp(), clock=lambda: T0.timestamp())
    progress.start_from(local_status())
    seen = [(-1.0, progress.phase)]
    for seconds, replica, text in lines:
        progress(LogLine(at(seconds), replica, text))
        seen.append((seconds, progress.phase))
    return progress, seen


def test_a_local_run_starts_tensorflow_and_uploads_nothing() -> None:
    progress, seen = _watch()
    assert seen[0] == (-1.0, "starting TensorFlow")  # not "installing package": the environment is there
    assert [phase for _, phase in seen[1:5]] == ["starting TensorFlow"] * 4  # TensorFlow's own start-up lines
    assert seen[-1] == (42.0, "training")  # the done event starts no "uploading": nothing is uploaded
    phases = timeline.of_run(local_status(JobState.SUCCEEDED, end=43.0), progress.marks)
    assert [(p.name, p.seconds) for p in phases] == [("starting TensorFlow", 24.0), ("training", 19.0)]


def test_the_live_line_and_the_summary_name_one_moment_for_the_start_of_training() -> None:
    """The live line switched at the code's first own line (the progress bar), while the summary
    ranked the first event first and said training began six seconds later."""
    progress, seen = _watch()
    live = next(seconds for seconds, phase in seen if phase == "training")
    summary = {p.name: p for p in timeline.of_run(local_status(JobState.SUCCEEDED, end=43.0), progress.marks)}
    report = {
        p.name: p
        for p in timeline.of_run(
            local_status(JobState.SUCCEEDED, end=43.0),
            timeline.log_marks(LogLine(at(s), r, t) for s, r, t in LINES),  # the report's source: the lines file
        )
    }
    assert live == 24.0 and summary["training"].start == at(live) == report["training"].start


def test_a_cloud_job_still_uploads_after_its_done_event() -> None:
    status = JobStatus("1", "jobs/1", JobState.RUNNING, "JOB_STATE_RUNNING", created=at(0), first_phase="provisioning")
    progress = Progress(cost_per_hour=None, started=T0.timestamp(), clock=lambda: T0.timestamp())
    progress.start_from(status)
    progress(LogLine(at(50), "workerpool0-0", json.dumps({"event": "plan", "epochs": 1})))
    progress(LogLine(at(90), "workerpool0-0", json.dumps({"event": "done"})))
    assert progress.phase == "uploading"
    ended = JobStatus(
        "1",
        "jobs/1",
        JobState.SUCCEEDED,
        "JOB_STATE_SUCCEEDED",
        created=at(0),
        ended=at(99),
        first_phase="provisioning",
    )
    assert [p.name for p in timeline.of_run(ended, progress.marks)][-1] == "uploading"
