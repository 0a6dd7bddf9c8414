"""States through one table, stop (StopTrainingJob, via botocore's Stubber: moto lacks it), list."""

from __future__ import annotations

import datetime as dt

import pytest
from botocore.stub import Stubber

from cloudtrain.backends.base import JobState
from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.backends.sagemaker.aws import AwsClients
from cloudtrain.backends.sagemaker.jobs import SageMakerJob, job_state, to_status
from tests.fakes.aws import ROLE_ARN, MotoAws, use_moto


@pytest.mark.parametrize(
    ("status", "secondary", "state"),
    [
        ("InProgress", "Starting", JobState.PENDING),
        ("InProgress", "LaunchingMLInstances", JobState.PENDING),
        ("InProgress", "Downloading", JobState.PENDING),
        ("InProgress", "DownloadingTrainingImage", JobState.PENDING),
        ("InProgress", "Training", JobState.RUNNING),
        ("InProgress", "Uploading", JobState.RUNNING),
        ("InProgress", "Interrupted", JobState.RUNNING),
        ("Stopping", "Stopping", JobState.STOPPING),
        ("Completed", "Completed", JobState.SUCCEEDED),
        ("Failed", "Failed", JobState.FAILED),
        ("Stopped", "Stopped", JobState.CANCELLED),
        ("Stopped", "MaxRuntimeExceeded", JobState.TIMED_OUT),
        ("Stopped", "MaxWaitTimeExceeded", JobState.TIMED_OUT),
        ("Exploded", None, JobState.UNKNOWN),
    ],
)
def test_state_table(status: str, secondary: str | None, state: JobState) -> None:
    assert job_state(status, secondary) is state


def _desc(status: str, secondary: str, **extra) -> dict:
    return {
        "TrainingJobName": "j",
        "TrainingJobArn": "arn:aws:sagemaker:eu-west-1:123456789012:training-job/j",
        "TrainingJobStatus": status,
        "SecondaryStatus": secondary,
        "AlgorithmSpecification": {"TrainingInputMode": "File", "TrainingImage": "tf"},
        "ResourceConfig": {"InstanceType": "ml.p3.8xlarge", "InstanceCount": 2, "VolumeSizeInGB": 50},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
        "CreationTime": dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc),
        "ModelArtifacts": {"S3ModelArtifacts": "s3://b/out/j/output/model.tar.gz"},
        **extra,
    }


def test_stopped_for_max_runtime_says_so() -> None:
    status = to_status(_desc("Stopped", "MaxRuntimeExceeded"), "eu-west-1")
    assert status.state is JobState.TIMED_OUT and status.state.exit_code == 124
    assert status.message == "stopped by SageMaker: the job ran longer than max_runtime (3600 s)"


def test_status_details() -> None:
    status = to_status(
        _desc("Completed", "Completed", TrainingTimeInSeconds=100, BillableTimeInSeconds=100), "eu-west-1"
    )
    assert status.job_id == "j" and status.name.endswith("training-job/j")
    assert status.console_url == "https://eu-west-1.console.aws.amazon.com/sagemaker/home?region=eu-west-1#/jobs/j"
    assert status.details == {
        "region": "eu-west-1",
        "secondary_status": "Completed",
        "instance_type": "ml.p3.8xlarge",
        "instance_count": 2,
        "training_seconds": 200,
        "billable_seconds": 200,
        "model_artifacts": "s3://b/out/j/output/model.tar.gz",
    }


def _stubbed_job() -> tuple[SageMakerJob, Stubber]:
    import boto3

    session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="eu-west-1")
    clients = AwsClients("eu-west-1", session=session)
    return SageMakerJob("j", clients, sleep=lambda s: None), Stubber(clients.sagemaker)


def test_cancel_stops_the_job_and_reports_stopping() -> None:
    job, stub = _stubbed_job()
    stub.add_response("describe_training_job", _desc("InProgress", "Training"), {"TrainingJobName": "j"})
    stub.add_response("stop_training_job", {}, {"TrainingJobName": "j"})
    stub.add_response("describe_training_job", _desc("Stopping", "Stopping"), {"TrainingJobName": "j"})
    with stub:
        status = job.cancel()
    stub.assert_no_pending_responses()
    assert status.state is JobState.STOPPING


def test_cancel_of_a_finished_job_stops_nothing() -> None:
    job, stub = _stubbed_job()
    stub.add_response("describe_training_job", _desc("Completed", "Completed"), {"TrainingJobName": "j"})
    with stub:
        assert job.cancel().state is JobState.SUCCEEDED
    stub.assert_no_pending_responses()


def test_cancel_refused_by_the_service_is_one_line() -> None:
    from cloudtrain.errors import BackendError

    job, stub = _stubbed_job()
    stub.add_response("describe_training_job", _desc("InProgress", "Training"), {"TrainingJobName": "j"})
    stub.add_client_error("stop_training_job", "AccessDeniedException", "not allowed to sagemaker:StopTrainingJob")
    with stub, pytest.raises(BackendError) as err:
        job.cancel()
    assert str(err.value) == "stopping training job j: AccessDeniedException: not allowed to sagemaker:StopTrainingJob"


def test_wait_polls_until_terminal() -> None:
    job, stub = _stubbed_job()
    sleeps: list[float] = []
    job.sleep = sleeps.append
    for state, secondary in [("InProgress", "Starting"), ("InProgress", "Training"), ("Stopped", "Stopped")]:
        stub.add_response("describe_training_job", _desc(state, secondary), {"TrainingJobName": "j"})
    with stub:
        status = job.wait()
    assert status.state is JobState.CANCELLED and status.state.exit_code == 130
    assert sleeps == [10.0, 10.0]


@pytest.mark.server
def test_list_jobs_is_limited_and_maps_states(moto_session: MotoAws, monkeypatch) -> None:
    moto_session.reset()
    use_moto(monkeypatch, moto_session)
    sm = moto_session.client("sagemaker", "ap-northeast-1")
    for i in range(3):
        sm.create_training_job(
            TrainingJobName=f"job-{i}",
            AlgorithmSpecification={"TrainingImage": "tf", "TrainingInputMode": "File"},
            RoleArn=ROLE_ARN,
            OutputDataConfig={"S3OutputPath": "s3://b/out"},
            ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 10},
            StoppingCondition={"MaxRuntimeInSeconds": 60},
        )
    moto_session.set_job("ap-northeast-1", "job-1", "Failed", failure_reason="x")
    jobs = SageMakerBackend().list_jobs(region="ap-northeast-1", limit=2)
    assert len(jobs) == 2
    everything = SageMakerBackend().list_jobs(region="ap-northeast-1")
    assert {j.job_id: j.state for j in everything} == {
        "job-0": JobState.SUCCEEDED,
        "job-1": JobState.FAILED,
        "job-2": JobState.SUCCEEDED,
    }


def test_status_names_the_checkpoint_location_that_submit_resume_continues() -> None:
    desc = _desc("Stopped", "Interrupted", CheckpointConfig={"S3Uri": "s3://b/out/j/checkpoints"})
    assert to_status(desc, "eu-west-1").details["checkpoint_dir"] == "s3://b/out/j/checkpoints"
    assert "checkpoint_dir" not in to_status(_desc("Completed", "Completed"), "eu-west-1").details
