"""Interruptions on the real servers: a managed spot job's ``Interrupted`` transition on moto (added by
the test wrapper as SageMaker reports it) and a Vertex job whose worker restarted (its log only), each
with the trainer's event lines in the job's log; ``status`` (JSON and text) and the report show them."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.cli import main
from tests.fakes.aws import LogWriter
from tests.fakes.vertex_jobs import Script
from trainer.events import format_event

pytestmark = pytest.mark.server


def _events(start: float, notice_offset: float, restart_offset: float) -> tuple[list, list]:
    """(seconds, line) of the first attempt and of the restart: SIGTERM at step 14, checkpoint saved there."""
    plan = lambda resume: format_event("plan", resume_step=resume, batch={"steps_per_epoch": 10})  # noqa: E731
    first = [
        (0, plan(0)),
        (20, format_event("epoch", epoch=1, steps=10, epoch_time_s=5.0, checkpoint="/opt/ml/checkpoints/ckpt-10/ckpt")),
        (
            notice_offset + 1,
            format_event(
                "preempted",
                step=14,
                checkpoint="/opt/ml/checkpoints/ckpt-14/ckpt",
                notice="SIGTERM",
                notice_at=start + notice_offset,
            ),
        ),
    ]
    second = [
        (restart_offset, plan(14)),
        (restart_offset + 10, format_event("epoch", epoch=2, steps=6, epoch_time_s=3.0, resumed_at_step=4)),
        (restart_offset + 11, format_event("done", steps=20)),
    ]
    return first, second


def test_sagemaker_spot_interruption_in_status_json_text_and_report(aws, build_package, tmp_path, monkeypatch, capsys):
    from tests.backends.sagemaker.conftest import make_spec

    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    aws.client("s3", "us-east-1").create_bucket(Bucket="cloudtrain-staging")
    handle = SageMakerBackend().submit(make_spec(spot=True, max_wait_seconds=7200), build_package())
    start = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) - dt.timedelta(
        hours=1
    )  # CloudWatch keeps recent events
    at = lambda s: start + dt.timedelta(seconds=s)  # noqa: E731
    # As DescribeTrainingJob words a job interrupted once (model-managed-spot-training-status.html).
    transitions = [
        {
            "Status": "Starting",
            "StartTime": at(-120),
            "EndTime": at(-60),
            "StatusMessage": "Preparing the instances for training",
        },
        {"Status": "Downloading", "StartTime": at(-60), "EndTime": at(-5), "StatusMessage": "Downloading input data"},
        {
            "Status": "Training",
            "StartTime": at(-5),
            "EndTime": at(130),
            "StatusMessage": "Training image download completed. Training in progress.",
        },
        {
            "Status": "Interrupted",
            "StartTime": at(130),
            "EndTime": at(200),
            "StatusMessage": "Training job interrupted due to spot instance interruption.",
        },
        {
            "Status": "Starting",
            "StartTime": at(200),
            "EndTime": at(260),
            "StatusMessage": "Launching requested ML instances",
        },
        {"Status": "Downloading", "StartTime": at(260), "EndTime": at(300), "StatusMessage": "Downloading input data"},
        {
            "Status": "Training",
            "StartTime": at(300),
            "EndTime": at(460),
            "StatusMessage": "Training image download completed. Training in progress.",
        },
        {
            "Status": "Uploading",
            "StartTime": at(460),
            "EndTime": at(470),
            "StatusMessage": "Uploading generated training model",
        },
    ]
    aws.set_job(
        "us-east-1", handle.job_id, "Completed", training_seconds=600, billable_seconds=180, transitions=transitions
    )
    first, second = _events(start.timestamp(), notice_offset=125, restart_offset=330)
    writer = LogWriter(aws.client("logs", "us-east-1"), handle.job_id)
    for started, lines in ((1, first), (2, second)):  # a restarted instance writes a new stream
        stream = writer.open(1, started=1700000000 + started)
        for seconds, message in lines:
            writer.write(stream, [message], start_ms=int((start.timestamp() + seconds) * 1000))

    flags = [handle.job_id, "--backend", "sagemaker", "--region", "us-east-1"]
    assert main(["status", *flags, "-o", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    interrupted = out["interruptions"]
    assert interrupted["count"] == 1 and interrupted["steps_redone"] == 0
    item = interrupted["items"][0]
    assert item["source"].startswith("SageMaker SecondaryStatus Interrupted; notice (SIGTERM)")
    assert (item["step"], item["resume_step"]) == (14, 14)
    assert item["at"] == at(125).isoformat() and item["resumed_at"] == at(330).isoformat()
    assert item["seconds_lost"] == 205.0
    assert "spot_interruptions" in out["details"] and out["cost"]["spot_savings_usd"] > 0

    assert main(["status", *flags]) == 0
    text = capsys.readouterr().out
    assert "0 steps redone; 3 min 25 s lost" in text and "resumed from step 14" in text

    from cloudtrain.reporting import collect

    status = handle.status()
    run = collect.from_parts(status, list(handle.logs(follow=False)), "sagemaker")
    assert run.interruptions is not None and run.interruptions["count"] == 1 and status.created is not None
    assert run.interruption_offsets() == [
        ((at(125) - status.created).total_seconds(), (at(330) - status.created).total_seconds())
    ]


def test_vertex_worker_restart_seen_in_the_log_only(
    backend, jobs, logging_fake, gcs, clock, tmp_path, monkeypatch, capsys
):
    """Vertex keeps the job RUNNING through a preempted worker's restart: the trainer's lines tell it,
    here a SIGKILL with no notice, so the steps since the last checkpoint are redone."""
    import cloudtrain.backends.vertex as vertex_module
    from tests.backends.vertex.conftest import make_package, make_spec

    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(vertex_module, "BACKEND", backend)
    jobs.scripts = [Script(timeline=[(0, "RUNNING"), (900, "SUCCEEDED")])]
    handle = backend.submit(make_spec(spot=True), make_package(tmp_path))
    now = clock.time()
    plan = lambda resume: format_event("plan", resume_step=resume, batch={"steps_per_epoch": 10})  # noqa: E731
    for seconds, message in [
        (10, plan(0)),
        (20, format_event("epoch", epoch=1, steps=10, epoch_time_s=8.0, checkpoint="gs://b/ckpt-10/ckpt")),
        (30, format_event("epoch", epoch=2, steps=10, epoch_time_s=8.0, checkpoint=None)),
        (200, plan(10)),  # the restarted worker: back at the epoch-1 checkpoint
        (220, format_event("epoch", epoch=2, steps=10, epoch_time_s=8.0, checkpoint="gs://b/ckpt-20/ckpt")),
    ]:
        logging_fake.add(handle.job_id, "workerpool0-0", message, at=now + seconds)
    clock.sleep(1000)
    assert (
        main(
            [
                "status",
                handle.job_id,
                "--backend",
                "vertex",
                "--region",
                "us-central1",
                "--project",
                "my-project",
                "-o",
                "json",
            ]
        )
        == 0
    )
    interrupted = json.loads(capsys.readouterr().out)["interruptions"]
    assert interrupted["count"] == 1 and interrupted["steps_redone"] == 10
    item = interrupted["items"][0]
    assert item["source"] == "restart with no notice in the log" and not item["exact"]
    assert item["down_s"] == 170.0 and item["redo_s"] == 8.0  # 10 steps × 0.8 s


def test_vertex_spot_job_that_failed_with_stockout_after_running(
    backend, jobs, logging_fake, gcs, clock, tmp_path, monkeypatch, capsys
):
    """Vertex's own record of a spot job whose restarts were used up: it fails with STOCKOUT after it ran;
    the trainer's last ``preempted`` line says what was saved, so a ``--resume`` redoes nothing."""
    import cloudtrain.backends.vertex as vertex_module
    from tests.backends.vertex.conftest import make_package, make_spec

    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(vertex_module, "BACKEND", backend)
    jobs.scripts = [
        Script(timeline=[(0, "RUNNING"), (600, "FAILED")], error="STOCKOUT: the spot VMs of workerpool0 were preempted")
    ]
    handle = backend.submit(make_spec(spot=True), make_package(tmp_path))
    clock.sleep(5)
    assert handle.status().details.get("start_time")  # it ran
    first, _ = _events(clock.time(), notice_offset=300, restart_offset=0)
    for seconds, message in first:
        logging_fake.add(handle.job_id, "workerpool0-0", message, at=clock.time() + seconds)
    clock.sleep(700)
    assert (
        main(
            [
                "status",
                handle.job_id,
                "--backend",
                "vertex",
                "--region",
                "us-central1",
                "--project",
                "my-project",
                "-o",
                "json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["state"] == "FAILED" and out["details"]["spot_interruptions"][0]["resumed_at"] is None
    item = out["interruptions"]["items"][0]
    assert out["interruptions"]["count"] == 1 and item["source"].startswith("Vertex AI STOCKOUT")
    assert (item["step"], item["checkpoint_step"], item["steps_redone"]) == (14, 14, 0)
