"""SageMaker finds a training job, a tuning job and its job list by region: without one, one UsageError
line that says to pass --region, before any AWS client is made."""

from __future__ import annotations

import pytest

from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.backends.sagemaker.aws import AwsClients
from cloudtrain.backends.sagemaker.tuning_jobs import SageMakerSweep
from cloudtrain.errors import UsageError


def _no_clients(region: str) -> AwsClients:
    raise AssertionError(f"an AWS client was made for {region!r}")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda b: b.attach("train-1"), "job train-1: a SageMaker training job is found by its region"),
        (lambda b: b.attach_sweep("tune-2"), "sweep tune-2: a SageMaker tuning job is found by its region"),
        (lambda b: b.list_jobs(limit=3), "SageMaker training jobs are listed by region"),
    ],
)
def test_without_a_region_one_line_says_pass_region(call, message) -> None:
    with pytest.raises(UsageError) as caught:
        call(SageMakerBackend(clients=_no_clients))
    assert caught.value.message == message
    assert caught.value.hint == "pass --region"


def test_a_tuning_job_handle_takes_the_drain_every_handle_takes() -> None:
    sweep = SageMakerSweep("tune-3", AwsClients("eu-north-1"))
    assert list(sweep.logs(follow=True, drain=2.5)) == []  # its trials hold the lines
    assert sweep.location == {"region": "eu-north-1"}
