"""Vertex AI finds a job, a tuning job and its job list by region: without one, one UsageError line that
says to pass --region (before any cloud call); a full job name carries its own region (test_backend.py)."""

from __future__ import annotations

import pytest

from cloudtrain.backends.vertex import VertexBackend
from cloudtrain.backends.vertex.tuning_jobs import VertexSweep
from cloudtrain.errors import UsageError


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda b: b.attach("4711"), "job 4711: a Vertex AI job is found by its region"),
        (lambda b: b.attach_sweep("815"), "sweep 815: a Vertex AI tuning job is found by its region"),
        (lambda b: b.list_jobs(project="p-1"), "Vertex AI jobs are listed by region"),
    ],
)
def test_without_a_region_one_line_says_pass_region(call, message) -> None:
    with pytest.raises(UsageError) as caught:
        call(VertexBackend(env={}))
    assert caught.value.message == message
    assert caught.value.hint == "pass --region"


def test_a_tuning_job_handle_takes_the_drain_every_handle_takes() -> None:
    sweep = VertexSweep(None, "projects/p-3/locations/asia-east1/hyperparameterTuningJobs/7")
    assert list(sweep.logs(follow=True, drain=2.5)) == []  # its trials hold the lines
    assert sweep.location == {"project": "p-3", "region": "asia-east1"}
