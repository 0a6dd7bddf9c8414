"""submit against moto: upload once, create the job in the job's region, clear errors before anything is created."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.backends.sagemaker.upload import Uploaded
from cloudtrain.errors import BackendError, CredentialsError
from tests.backends.sagemaker.conftest import make_spec
from tests.fakes.aws import MotoAws

pytestmark = pytest.mark.server

BUCKET = "cloudtrain-staging"


def _bucket(aws: MotoAws, region: str, name: str = BUCKET) -> None:
    s3 = aws.client("s3", region)
    if region == "us-east-1":
        s3.create_bucket(Bucket=name)
    else:
        s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": region})


def uploaded(job: Any) -> Uploaded:
    """What submit uploaded for a training job (a sweep has no one upload)."""
    assert job.uploaded is not None
    return job.uploaded


def test_submit_uploads_the_source_dir_and_creates_the_rendered_job(aws: MotoAws, build_package) -> None:
    _bucket(aws, "us-east-1")
    package = build_package()
    spec = make_spec()
    backend = SageMakerBackend()

    job = backend.submit(spec, package)

    key = f"cloudtrain/packages/{package.sha256}/sourcedir.tar.gz"
    head = aws.client("s3", "us-east-1").head_object(Bucket=BUCKET, Key=key)
    assert head["Metadata"]["sha256"] == uploaded(job).sha256 and head["ContentLength"] == uploaded(job).size
    assert head["Metadata"]["package-sha256"] == package.sha256
    assert not uploaded(job).skipped

    sent = backend.render(spec, package)
    desc = aws.client("sagemaker", "us-east-1").describe_training_job(TrainingJobName=spec.job_name)
    assert desc["HyperParameters"] == sent["HyperParameters"]
    assert desc["AlgorithmSpecification"]["TrainingImage"] == spec.image_uri
    assert desc["ResourceConfig"] == sent["ResourceConfig"]
    assert json.loads(desc["HyperParameters"]["sagemaker_submit_directory"]) == f"s3://{BUCKET}/{key}"
    assert job.status().state is JobState.SUCCEEDED  # moto completes every job at once


def test_second_submit_of_an_unchanged_package_uploads_nothing(aws: MotoAws, build_package, caplog) -> None:
    _bucket(aws, "us-east-1")
    package = build_package()
    backend = SageMakerBackend()
    first = backend.submit(make_spec(job_name="mnist-1"), package)

    s3 = aws.client("s3", "us-east-1")
    key = f"cloudtrain/packages/{package.sha256}/sourcedir.tar.gz"
    before = s3.head_object(Bucket=BUCKET, Key=key)
    uploads = []
    with caplog.at_level(logging.INFO, logger="cloudtrain.sagemaker"):
        s3_client = backend.clients  # count PutObject calls through a hook on the next submit's client

        def clients(region: str):
            made = s3_client(region)
            made.s3.meta.events.register("before-call.s3.PutObject", lambda **kw: uploads.append(kw))
            made.s3.meta.events.register("before-call.s3.CreateMultipartUpload", lambda **kw: uploads.append(kw))
            return made

        backend.clients = clients
        second = backend.submit(make_spec(job_name="mnist-2"), package)

    assert uploaded(second).skipped and uploaded(second).sha256 == uploaded(first).sha256
    assert uploads == []
    assert s3.head_object(Bucket=BUCKET, Key=key)["LastModified"] == before["LastModified"]
    assert "already uploaded" in caplog.text
    assert {j.job_id for j in backend.list_jobs(region="us-east-1")} == {"mnist-1", "mnist-2"}


def test_a_changed_object_is_uploaded_again(aws: MotoAws, build_package) -> None:
    _bucket(aws, "us-east-1")
    package = build_package()
    key = f"cloudtrain/packages/{package.sha256}/sourcedir.tar.gz"
    aws.client("s3", "us-east-1").put_object(Bucket=BUCKET, Key=key, Body=b"truncated", Metadata={"sha256": "0" * 64})
    job = SageMakerBackend().submit(make_spec(), package)
    assert not uploaded(job).skipped
    assert aws.client("s3", "us-east-1").head_object(Bucket=BUCKET, Key=key)["ContentLength"] == uploaded(job).size


def test_job_region_is_used_even_when_the_default_region_differs(aws: MotoAws, build_package) -> None:
    assert aws.client("sts", "us-east-1")  # default region of this test: us-east-1 (see use_moto)
    _bucket(aws, "eu-west-1")
    spec = make_spec(region="eu-west-1")
    job = SageMakerBackend().submit(spec, build_package())

    assert [
        j["TrainingJobName"] for j in aws.client("sagemaker", "eu-west-1").list_training_jobs()["TrainingJobSummaries"]
    ] == [spec.job_name]
    assert aws.client("sagemaker", "us-east-1").list_training_jobs()["TrainingJobSummaries"] == []
    assert job.status().details["region"] == "eu-west-1"
    assert SageMakerBackend().attach(spec.job_name, region="eu-west-1").status().job_id == spec.job_name


def test_missing_bucket_is_one_line_and_nothing_is_created(aws: MotoAws, build_package) -> None:
    with pytest.raises(BackendError) as err:
        SageMakerBackend().submit(make_spec(), build_package())
    assert str(err.value).startswith(f"staging bucket s3://{BUCKET} does not exist — create it (aws s3 mb")
    assert "\n" not in str(err.value)
    assert aws.client("sagemaker", "us-east-1").list_training_jobs()["TrainingJobSummaries"] == []


def test_bucket_in_another_region_is_refused_before_anything_is_created(aws: MotoAws, build_package) -> None:
    _bucket(aws, "eu-west-1")
    with pytest.raises(BackendError, match="is in eu-west-1, the job in us-east-1"):
        SageMakerBackend().submit(make_spec(), build_package())
    assert aws.client("sagemaker", "us-east-1").list_training_jobs()["TrainingJobSummaries"] == []


def test_missing_credentials_say_how_to_configure(aws: MotoAws, build_package, monkeypatch) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key)
    with pytest.raises(CredentialsError) as err:
        SageMakerBackend().submit(make_spec(), build_package())
    assert str(err.value) == (
        "no AWS credentials found — run `aws configure`, "
        "or set AWS_PROFILE (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
    )


def test_unknown_profile_is_a_credentials_error(aws: MotoAws, monkeypatch) -> None:
    monkeypatch.setenv("AWS_PROFILE", "nope")
    with pytest.raises(CredentialsError, match="AWS profile 'nope' not found"):
        SageMakerBackend().list_jobs(region="us-east-1")


def test_attach_to_a_job_that_does_not_exist(aws: MotoAws) -> None:
    with pytest.raises(BackendError, match="no SageMaker training job 'nope' in us-west-2"):
        SageMakerBackend().attach("nope", region="us-west-2")


def test_a_request_the_service_refuses_is_one_line(aws: MotoAws, build_package) -> None:
    _bucket(aws, "us-east-1")
    backend = SageMakerBackend()

    def clients(region: str):
        from cloudtrain.backends.sagemaker.aws import AwsClients

        made = AwsClients(region)

        def refuse(**kwargs):
            from botocore.exceptions import ClientError

            raise ClientError(
                {"Error": {"Code": "ValidationException", "Message": "bad instance"}}, "CreateTrainingJob"
            )

        made.sagemaker.meta.events.register("before-call.sagemaker.CreateTrainingJob", refuse)
        return made

    backend.clients = clients
    with pytest.raises(BackendError) as err:
        backend.submit(make_spec(), build_package())
    assert str(err.value) == "creating training job mnist-20250102-030405: ValidationException: bad instance"


def test_a_container_job_uploads_nothing_and_runs_the_ecr_image(aws: MotoAws) -> None:
    from cloudtrain.spec import ContainerSpec

    _bucket(aws, "us-east-1")
    image = "123456789012.dkr.ecr.us-east-1.amazonaws.com/mnist:1"
    spec = make_spec(container=ContainerSpec(image, ("python", "train.py")), image_uri=image)
    SageMakerBackend().submit(spec, None)
    desc = aws.client("sagemaker", "us-east-1").describe_training_job(TrainingJobName=spec.job_name)
    assert desc["AlgorithmSpecification"]["TrainingImage"] == image
    assert aws.client("s3", "us-east-1").list_objects_v2(Bucket=BUCKET).get("KeyCount", 0) == 0
