"""What other modules read of a job's status comes from its typed fields; ``details`` is for display.

Each backend fills the typed fields itself (no reader maps a detail key to one: no shims before 1.0), so a
status that carries a value only as a display detail does not stand in for the field.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import cast

import pytest
from google.cloud.aiplatform_v1.types import CustomJob

from cloudtrain.app.prepare import resumed
from cloudtrain.backends.base import Backend, HandleDefaults, JobState, JobStatus
from cloudtrain.backends.sagemaker.jobs import to_status as sagemaker_status
from cloudtrain.backends.vertex.jobs import to_status as vertex_status
from cloudtrain.following import timeline
from cloudtrain.following.interruptions import of_status
from cloudtrain.following.progress import phase_of
from cloudtrain.reporting.collect import from_parts
from tests.backends.vertex.conftest import make_spec

AT = "2025-01-02T03:04:05+00:00"
T0 = dt.datetime.fromisoformat(AT)
TAKEN_BACK = [{"at": AT, "resumed_at": None, "source": "spot VMs taken back"}]


def _sagemaker_desc_spot_lost() -> dict:
    """A managed spot job whose machines were taken back (Interrupted), then trained on."""
    return _sagemaker_desc(
        "Training",
        EnableManagedSpotTraining=True,
        SecondaryStatusTransitions=[
            {"Status": "Training", "StartTime": T0 + dt.timedelta(seconds=5)},
            {
                "Status": "Interrupted",
                "StartTime": T0 + dt.timedelta(seconds=0),
                "EndTime": T0 + dt.timedelta(seconds=90),
            },
            {"Status": "Training", "StartTime": T0 + dt.timedelta(seconds=100)},
        ],
    )


def _sagemaker_desc(secondary: str, **extra) -> dict:
    return {
        "TrainingJobName": "j",
        "TrainingJobStatus": "InProgress",
        "SecondaryStatus": secondary,
        "ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 3, "VolumeSizeInGB": 50},
        "CreationTime": T0,
        **extra,
    }


def _pending(**fields) -> JobStatus:
    return JobStatus("j", "j", JobState.PENDING, "PENDING", **fields)


@pytest.mark.parametrize(
    "status",
    [_pending(waiting_for="Priority")],
    ids=["typed"],
)
def test_a_queued_job_says_what_it_waits_for(status) -> None:
    assert phase_of(status) == "queued: Priority"


@pytest.mark.parametrize(
    ("status", "source"),
    [
        (JobStatus("j", "j", JobState.FAILED, "FAILED", interruptions=TAKEN_BACK), "spot VMs taken back"),
        (sagemaker_status(_sagemaker_desc_spot_lost(), "us-east-1"), "SageMaker SecondaryStatus Interrupted"),
    ],
    ids=["typed", "sagemaker"],
)
def test_the_platforms_interruptions_are_counted(status, source) -> None:
    summary = of_status(status, [])
    assert summary is not None and summary["count"] == 1
    assert summary["items"][0]["at"] == AT and source in summary["items"][0]["source"]


class _Job(HandleDefaults):
    def __init__(self, status: JobStatus) -> None:
        self._status = status

    def status(self) -> JobStatus:
        return self._status


class _Backend:
    def __init__(self, status: JobStatus) -> None:
        self._status = status

    def attach(self, job_id: str, **location) -> _Job:
        return _Job(self._status)


def test_resume_continues_the_typed_checkpoint_and_output_dirs() -> None:
    ended = JobStatus(
        "42",
        "projects/p/locations/r/customJobs/42",
        JobState.PREEMPTED,
        "JOB_STATE_FAILED",
        ended=dt.datetime(2025, 1, 2, tzinfo=dt.timezone.utc),
        output_dir="gs://b/out/old",
        checkpoint_dir="gs://b/out/old/checkpoints",
    )
    resume = resumed(make_spec(), cast(Backend, _Backend(ended)), "42").resume  # a fake with only attach
    assert resume is not None
    assert dataclasses.astuple(resume) == ("42", "gs://b/out/old/checkpoints", "gs://b/out/old")


def _at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


@pytest.mark.parametrize(
    "status",
    [
        _pending(phase="pulling image"),
        sagemaker_status(_sagemaker_desc("DownloadingTrainingImage", TrainingJobStatus="InProgress"), "us-east-1"),
    ],
    ids=["typed", "sagemaker"],
)
def test_the_phase_before_the_first_line_is_the_one_the_platform_reports(status) -> None:
    assert phase_of(status) == "pulling image"  # not the state's "provisioning"


@pytest.mark.parametrize(
    ("secondary", "phase", "shown"),
    [
        ("Pending", "queued", "queued"),
        ("LaunchingMLInstances", "provisioning", "provisioning"),
        ("DownloadingTrainingImage", "pulling image", "pulling image"),
        ("Training", None, "installing package"),  # the code runs: its lines say the rest
        ("Uploading", None, "installing package"),
    ],
)
def test_sagemaker_statuses_carry_the_phase_of_their_secondary_status(secondary, phase, shown) -> None:
    status = sagemaker_status(_sagemaker_desc(secondary), "us-east-1")
    assert (status.phase, phase_of(status)) == (phase, shown)


def _vertex(**fields) -> JobStatus:
    return vertex_status(CustomJob(name="projects/p/locations/us-central1/customJobs/1", **fields))


@pytest.mark.parametrize(
    ("native", "phase", "shown"),
    [("JOB_STATE_QUEUED", "queued", "queued"), ("JOB_STATE_PENDING", None, "provisioning")],
)
def test_vertex_statuses_say_queued_while_in_the_queue(native, phase, shown) -> None:
    status = _vertex(state=native)
    assert (status.phase, phase_of(status)) == (phase, shown)


def _ended(**fields) -> JobStatus:
    return JobStatus("1", "1", JobState.SUCCEEDED, "SUCCEEDED", created=T0, ended=_at(600), **fields)


@pytest.mark.parametrize(
    "status",
    [
        _ended(started=_at(60), first_phase="provisioning"),
        _vertex(state="JOB_STATE_SUCCEEDED", create_time=T0, start_time=_at(60), end_time=_at(600)),
    ],
    ids=["typed", "vertex"],
)
def test_the_image_pull_starts_when_the_machines_started(status) -> None:
    assert timeline.status_marks(status) == {"provisioning": T0, "pulling image": _at(60)}


MARKS = {"queued": T0, "provisioning": _at(5), "pulling image": _at(80), "installing package": _at(200)}


@pytest.mark.parametrize(
    "status",
    [
        _ended(phase_marks=MARKS),
        sagemaker_status(
            _sagemaker_desc(
                "Training",
                SecondaryStatusTransitions=[
                    {"Status": "Starting", "StartTime": _at(5)},
                    {"Status": "DownloadingTrainingImage", "StartTime": _at(80)},
                    {"Status": "Training", "StartTime": _at(200)},
                ],
            ),
            "us-east-1",
        ),
    ],
    ids=["typed", "sagemaker"],
)
def test_the_platforms_phase_marks_make_the_timeline(status) -> None:
    assert timeline.status_marks(status) == MARKS


@pytest.mark.parametrize(
    ("status", "machine", "replicas"),
    [
        (_ended(machine_type="ml.g5.xlarge", replica_count=3), "ml.g5.xlarge", 3),
        (sagemaker_status(_sagemaker_desc("Completed"), "us-east-1"), "ml.g5.xlarge", 3),
    ],
    ids=["typed", "sagemaker"],
)
def test_the_report_shows_the_machine_and_the_replicas(status, machine, replicas) -> None:
    data = from_parts(status, [], "any")
    assert (data.machine, data.replicas) == (machine, replicas)


@pytest.mark.parametrize(
    "status",
    [
        _ended(gpu_hours=6.5, gpu_hours_source="sacct"),
    ],
    ids=["typed"],
)
def test_a_clusters_report_counts_gpu_hours_in_place_of_dollars(status) -> None:
    data = from_parts(status, [], "any")
    assert (data.cost_basis, data.cost_usd) == ("6.5 GPU-hours, from sacct", None)
