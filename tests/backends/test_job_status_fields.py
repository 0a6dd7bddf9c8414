"""What other modules read of a job's status comes from its typed fields; ``details`` is for display.

A backend (or a status file written before a field was typed) that fills only the detail key is
still read, through ``JobStatus.detail``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import cast

import pytest

from cloudtrain.app.prepare import resumed
from cloudtrain.backends.base import Backend, HandleDefaults, JobState, JobStatus
from cloudtrain.interruptions import of_status
from cloudtrain.progress import phase_of
from tests.backends.vertex.conftest import make_spec

AT = "2025-01-02T03:04:05+00:00"
TAKEN_BACK = [{"at": AT, "resumed_at": None, "source": "spot VMs taken back"}]


def _pending(**fields) -> JobStatus:
    return JobStatus("j", "j", JobState.PENDING, "PENDING", **fields)


@pytest.mark.parametrize(
    "status",
    [_pending(waiting_for="Priority"), _pending(details={"pending_reason": "Priority"})],
    ids=["typed", "detail"],
)
def test_a_queued_job_says_what_it_waits_for(status) -> None:
    assert phase_of(status) == "queued: Priority"


@pytest.mark.parametrize(
    "status",
    [
        JobStatus("j", "j", JobState.FAILED, "FAILED", interruptions=TAKEN_BACK),
        JobStatus("j", "j", JobState.FAILED, "FAILED", details={"spot_interruptions": TAKEN_BACK}),
    ],
    ids=["typed", "detail"],
)
def test_the_platforms_interruptions_are_counted(status) -> None:
    summary = of_status(status, [])
    assert summary is not None and summary["count"] == 1
    assert summary["items"][0]["at"] == AT and "spot VMs taken back" in summary["items"][0]["source"]


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
