"""Interruptions and the work they cost, from the trainer's own event lines (cloudtrain/following/interruptions.py)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from cloudtrain.backends.base import JobState, JobStatus, LogLine
from cloudtrain.backends.sagemaker.phases import sagemaker_transitions
from cloudtrain.following.interruptions import Tracker, describe, of_status, summarize
from trainer.events import format_event

T0 = dt.datetime(2026, 1, 2, 3, 0, tzinfo=dt.timezone.utc)


def line(seconds: float, event: str, **fields) -> LogLine:
    return LogLine(T0 + dt.timedelta(seconds=seconds), "chief", format_event(event, **fields))


def plan(seconds: float, resume_step: int = 0) -> LogLine:
    return line(seconds, "plan", resume_step=resume_step, batch={"steps_per_epoch": 10})


def epoch(seconds: float, n: int, checkpoint: str | None = None, steps: int = 10) -> LogLine:
    return line(seconds, "epoch", epoch=n, steps=steps, epoch_time_s=5.0, checkpoint=checkpoint)


def summarized(lines: list[LogLine], state: str | None = None) -> dict[str, Any]:
    """The interruptions of ``lines``, which the test knows has some to summarize."""
    summary = summarize(Tracker().feed(lines), state=state)
    assert summary is not None
    return summary


def test_a_notice_saves_at_the_step_reached_nothing_is_redone_and_the_time_down_counts() -> None:
    notice = (T0 + dt.timedelta(seconds=20)).timestamp()
    lines = [
        plan(0),
        epoch(5, 1, "/c/ckpt-10/ckpt"),
        line(21, "preempted", step=14, checkpoint="/c/ckpt-14/ckpt", notice="SIGTERM", notice_at=notice),
        plan(320, resume_step=14),
        epoch(325, 2, "/c/ckpt-20/ckpt", steps=6),
        line(326, "done"),
    ]
    summary = summarized(lines)
    assert summary["count"] == 1 and summary["steps_redone"] == 0
    item = summary["items"][0]
    assert (item["step"], item["checkpoint_step"], item["resume_step"]) == (14, 14, 14)
    assert item["down_s"] == 300.0 and item["redo_s"] == 0.0 and item["seconds_lost"] == 300.0 and item["exact"]
    assert describe(summary) == "1; 0 steps redone; 5 min lost"


def test_a_restart_without_a_notice_redoes_the_steps_since_the_last_checkpoint() -> None:
    lines = [plan(0), epoch(5, 1, "/c/ckpt-10/ckpt"), epoch(10, 2, None), plan(70, resume_step=10), epoch(80, 2)]
    summary = summarized(lines)
    item = summary["items"][0]
    assert (item["step"], item["resume_step"], item["steps_redone"]) == (20, 10, 10)
    assert item["down_s"] == 60.0 and item["redo_s"] == 5.0 and item["seconds_lost"] == 65.0  # 10 steps × 0.5 s
    assert not item["exact"] and "at least 10 steps redone" in str(describe(summary))


def test_a_cancelled_jobs_last_save_is_the_users_stop_not_an_interruption() -> None:
    lines = [plan(0), epoch(5, 1), line(7, "preempted", step=13, checkpoint="/c/ckpt-13/ckpt", notice="SIGTERM")]
    assert summarize(Tracker().feed(lines), state="CANCELLED") is None
    preempted = summarized(lines, state="PREEMPTED")
    assert preempted["count"] == 1 and preempted["items"][0]["resumed_at"] is None
    assert preempted["items"][0]["steps_redone"] == 0  # the checkpoint is at the step reached
    assert describe(preempted) == "1, not resumed in this job; 0 steps to redo"  # the time lost is not known yet


def test_a_run_started_from_another_runs_checkpoint_says_so() -> None:
    summary = summarized([plan(0, resume_step=14), epoch(5, 2, steps=6)])
    assert summary["count"] == 0 and summary["resumed_from_step"] == 14
    assert describe(summary) == "none in this job; started from a checkpoint at step 14"


def test_sagemaker_interrupted_transitions_pair_with_the_log_in_order() -> None:
    at = lambda s: T0 + dt.timedelta(seconds=s)  # noqa: E731
    transitions = [
        {"Status": s, "StartTime": at(t)}
        for s, t in [
            ("Starting", 0),
            ("Downloading", 60),
            ("Training", 90),
            ("Interrupted", 400),
            ("Starting", 410),
            ("Downloading", 500),
            ("Training", 530),
            ("Interrupted", 900),
            ("Starting", 910),
            ("Training", 1000),
            ("Uploading", 1200),
        ]
    ]
    cloud = sagemaker_transitions(transitions)
    assert [(c["at"], c["resumed_at"]) for c in cloud] == [
        (at(400).isoformat(), at(530).isoformat()),
        (at(900).isoformat(), at(1000).isoformat()),
    ]
    log = [plan(100), epoch(200, 1, "/c/ckpt-10/ckpt"), plan(560, resume_step=10)]  # the second restart: no log yet
    status = JobStatus("j", "arn", JobState.RUNNING, "InProgress", interruptions=cloud)
    summary = of_status(status, log)
    assert summary is not None
    assert summary["count"] == 2
    first, second = summary["items"]
    assert first["source"].startswith("SageMaker SecondaryStatus Interrupted") and first["steps_redone"] == 0
    assert first["resumed_at"] == (T0 + dt.timedelta(seconds=560)).isoformat()  # the trainer's own restart
    assert second["at"] == at(900).isoformat() and second["steps_redone"] is None and not second["exact"]


def test_progress_collects_interruptions_while_following() -> None:
    from cloudtrain.following.progress import Progress

    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 10.0)
    for item in [plan(0), epoch(5, 1, "/c/ckpt-10/ckpt"), plan(50, resume_step=10)]:
        progress(item)
    summary = summarize(progress.interruptions)
    assert summary is not None and summary["count"] == 1
    assert "1 interruption · elapsed" in progress.snapshot().line()  # the live status line


def test_the_end_of_run_summary_shows_them_and_history_keeps_them(tmp_path, monkeypatch) -> None:
    import io

    from rich.console import Console

    from cloudtrain import history
    from cloudtrain.cli._follow import finish
    from cloudtrain.following.progress import Progress

    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path))
    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 10.0)
    for item in [plan(0), epoch(5, 1, "/c/ckpt-10/ckpt"), epoch(10, 2), plan(50, resume_step=10), epoch(60, 2)]:
        progress(item)
    status = JobStatus(
        "job-1", "job-1", JobState.SUCCEEDED, "succeeded", created=T0, ended=T0 + dt.timedelta(seconds=70)
    )
    out = io.StringIO()
    finish(Console(file=out, width=200), status, progress)
    assert "interruptions" in out.getvalue() and "at least 10 steps redone" in out.getvalue()
    run = history.load_run("job-1")
    assert run is not None
    kept = run["interruptions"]
    assert kept["count"] == 1 and kept["steps_redone"] == 10 and kept["items"][0]["resume_step"] == 10
