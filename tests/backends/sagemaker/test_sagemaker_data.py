"""Data channels on moto: an S3 channel and an uploaded local folder reach CreateTrainingJob."""

from __future__ import annotations

import logging
from types import MappingProxyType

import pytest

from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.data.staging import stage
from cloudtrain.spec import DataChannel
from tests.backends.sagemaker.conftest import make_spec
from tests.data.conftest import make_folder
from tests.fakes.aws import MotoAws

pytestmark = pytest.mark.server

BUCKET = "cloudtrain-staging"


def _spec(job_name: str, **channels: DataChannel):
    return make_spec(job_name=job_name, channels=MappingProxyType(channels))


def test_s3_channel_reaches_the_created_job(aws: MotoAws, build_package) -> None:
    aws.client("s3", "us-east-1").create_bucket(Bucket=BUCKET)
    spec = _spec(
        "mnist-s3",
        train=DataChannel("train", "s3://datasets/digits/train"),
        val=DataChannel("val", "s3://datasets/digits/val", "FastFile", "ShardedByS3Key"),
    )
    SageMakerBackend().submit(spec, build_package())
    desc = aws.client("sagemaker", "us-east-1").describe_training_job(TrainingJobName="mnist-s3")
    got = {
        c["ChannelName"]: (
            c["DataSource"]["S3DataSource"]["S3Uri"],
            c["InputMode"],
            c["DataSource"]["S3DataSource"]["S3DataDistributionType"],
        )
        for c in desc["InputDataConfig"]
    }
    assert got == {
        "train": ("s3://datasets/digits/train", "File", "FullyReplicated"),
        "val": ("s3://datasets/digits/val", "FastFile", "ShardedByS3Key"),
    }


def test_local_folder_is_uploaded_once_and_read_as_a_channel(aws: MotoAws, build_package, tmp_path, caplog) -> None:
    s3 = aws.client("s3", "us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    folder = make_folder(tmp_path / "digits", {"train.npz": b"N" * 300, "more/part-0.tfrecord": b"T" * 20})
    package = build_package()
    backend = SageMakerBackend()
    caplog.set_level(logging.INFO, logger="cloudtrain")

    backend.submit(_spec("mnist-1", train=DataChannel("train", str(folder))), package)
    digest = stage(_spec("x", train=DataChannel("train", str(folder)))).channels["train"].manifest.digest
    prefix = f"cloudtrain/data/{digest}/"
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix)["Contents"]
    assert sorted(o["Key"] for o in listed) == [prefix + "more/part-0.tfrecord", prefix + "train.npz"]
    assert s3.head_object(Bucket=BUCKET, Key=f"cloudtrain/data/manifests/{digest}.json")["ContentLength"] > 0
    desc = s3_desc = aws.client("sagemaker", "us-east-1").describe_training_job(TrainingJobName="mnist-1")
    assert s3_desc["InputDataConfig"][0]["DataSource"]["S3DataSource"]["S3Uri"] == f"s3://{BUCKET}/{prefix}"
    assert desc["InputDataConfig"][0]["ChannelName"] == "train"
    assert any("uploaded: 2 files" in r.getMessage() for r in caplog.records)

    caplog.clear()
    before = {o["Key"]: o["LastModified"] for o in listed}
    backend.submit(_spec("mnist-2", train=DataChannel("train", str(folder))), package)
    after = s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix)["Contents"]
    assert {o["Key"]: o["LastModified"] for o in after} == before
    assert any("unchanged (2 files, 320 bytes): upload skipped" in r.getMessage() for r in caplog.records)
