"""After a SageMaker job completes, a model.tar.gz with no files (nothing was in SM_MODEL_DIR) is a warning."""

from __future__ import annotations

import io
import tarfile

import pytest

from cloudtrain.backends.sagemaker.aws import AwsClients
from cloudtrain.backends.sagemaker.jobs import SageMakerJob, to_status
from tests.fakes.aws import MotoAws

pytestmark = pytest.mark.server

MODEL = "s3://my-bucket/out/j/output/model.tar.gz"


def _tar(*names: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in names:
            tar.addfile(tarfile.TarInfo(name), io.BytesIO(b""))
    return buf.getvalue()


def _status():
    return to_status(
        {
            "TrainingJobName": "j",
            "TrainingJobStatus": "Completed",
            "SecondaryStatus": "Completed",
            "ModelArtifacts": {"S3ModelArtifacts": MODEL},
        },
        "us-east-1",
    )


@pytest.fixture
def s3(aws: MotoAws):
    client = aws.client("s3", "us-east-1")
    client.create_bucket(Bucket="my-bucket")
    return client


def test_an_empty_model_tar_is_a_warning_naming_the_output_tar(s3):
    s3.put_object(Bucket="my-bucket", Key="out/j/output/model.tar.gz", Body=_tar())
    s3.put_object(Bucket="my-bucket", Key="out/j/output/output.tar.gz", Body=_tar("digits.keras", "metrics.json"))
    warning = SageMakerJob("j", AwsClients("us-east-1")).model_outputs_warning(_status())
    assert warning is not None and warning.startswith(f"the model dir {MODEL} is empty at the end of the run")
    assert "s3://my-bucket/out/j/output/output.tar.gz (SM_OUTPUT_DATA_DIR) (2 files)" in warning
    assert "SM_MODEL_DIR (/opt/ml/model)" in warning


def test_a_model_tar_with_files_is_no_warning(s3):
    s3.put_object(Bucket="my-bucket", Key="out/j/output/model.tar.gz", Body=_tar("1/saved_model.pb"))
    assert SageMakerJob("j", AwsClients("us-east-1")).model_outputs_warning(_status()) is None


def test_no_artifact_to_look_at_is_no_claim(s3):
    assert SageMakerJob("j", AwsClients("us-east-1")).model_outputs_warning(_status()) is None
