"""The ``data:`` key: strings or mappings, refused offline with one line per problem."""

from __future__ import annotations

import pytest

from cloudtrain.config.load import load_config
from cloudtrain.data import cloud_can_read, scheme_problem
from cloudtrain.errors import ConfigError
from cloudtrain.spec import build_spec
from tests.conftest import VERTEX_BASE

SAGEMAKER_BASE = """\
name: demo
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://my-bucket
machine:
  type: ml.g4dn.xlarge
package:
  path: trainer
"""


def error_of(path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value


def test_strings_and_mappings_become_channels(project, tmp_path):
    (tmp_path / "digits").mkdir()
    path = project(
        SAGEMAKER_BASE
        + """\
data:
  train: s3://bucket/digits/train
  validation: {source: s3://bucket/digits/val, input_mode: FastFile, distribution: ShardedByS3Key}
  extra: digits
"""
    )
    spec = build_spec(load_config(path))
    train, val, extra = spec.channels.values()
    assert (train.name, train.source, train.input_mode, train.distribution) == (
        "train",
        "s3://bucket/digits/train",
        "File",
        "FullyReplicated",
    )
    assert (val.input_mode, val.distribution, val.env_name) == ("FastFile", "ShardedByS3Key", "SM_CHANNEL_VALIDATION")
    assert extra.kind == "local" and extra.source == str((tmp_path / "digits").resolve())


@pytest.mark.parametrize(
    ("base", "channel", "message", "fix"),
    [
        (VERTEX_BASE, "s3://bucket/train", "Vertex AI cannot read s3:// data", "gs://YOUR-BUCKET"),
        (SAGEMAKER_BASE, "gs://bucket/train", "SageMaker cannot read gs:// data", "s3://YOUR-BUCKET"),
        (SAGEMAKER_BASE, "https://example.com/x", "https:// is not a data location", "s3://bucket/path"),
        (SAGEMAKER_BASE, "s3://", "names no bucket", "s3://BUCKET/path"),
        (SAGEMAKER_BASE, "./missing", "local folder './missing' does not exist", "point it at a folder"),
    ],
)
def test_a_location_the_cloud_cannot_read_names_the_fix(project, base, channel, message, fix):
    error = error_of(project(base + f"data:\n  train: {channel!r}\n"))
    assert error.field == "data.train" and message in str(error) and fix in str(error)
    assert "\n" not in str(error)


def test_local_run_follows_its_target_cloud(project):
    local = SAGEMAKER_BASE.replace("backend: sagemaker", "backend: local\ntarget: sagemaker")
    error = error_of(project(local + "data:\n  train: gs://b/x\n"))
    assert "SageMaker cannot read gs://" in str(error)
    spec = build_spec(load_config(project(local + "data:\n  train: s3://b/x\n")))
    assert spec.channels["train"].kind == "s3"


@pytest.mark.parametrize("name", ["val-1", "val.1", "trän"])
def test_names_that_cannot_be_environment_variables_are_refused(project, name):
    error = error_of(project(SAGEMAKER_BASE + f"data:\n  {name}: s3://b/x\n"))
    assert error.field == f"data.{name}" and "SM_CHANNEL_<NAME>" in str(error) and "rename it" in str(error)


def test_names_that_differ_only_in_case_are_refused(project):
    error = error_of(project(SAGEMAKER_BASE + "data:\n  train: s3://b/x\n  TRAIN: s3://b/y\n"))
    assert error.field == "data.TRAIN" and error.line == 12
    assert "'train' and 'TRAIN' differ only in case" in str(error) and "SM_CHANNEL_TRAIN" in str(error)


def test_sagemaker_settings_are_refused_on_vertex(project):
    error = error_of(project(VERTEX_BASE + "data:\n  train: {source: gs://b/x, input_mode: FastFile}\n"))
    assert error.field == "data.train.input_mode" and "SageMaker setting" in str(error)


def test_several_problems_one_line_each(project):
    error = error_of(project(SAGEMAKER_BASE + "data:\n  a-b: s3://b/x\n  c: gs://b/y\n"))
    lines = str(error).splitlines()
    assert len(lines) == 2
    assert ":11: data.a-b: channel name 'a-b'" in lines[0]
    assert ":12: data.c: received 'gs://b/y'; SageMaker cannot read gs://" in lines[1]


def test_schema_errors_in_a_channel_mapping_name_the_key(project):
    error = error_of(project(SAGEMAKER_BASE + "data:\n  train: {source: s3://b/x, input_mode: Pipe}\n"))
    assert error.field == "data.train.input_mode" and "allowed: 'File' or 'FastFile'" in str(error)
    error = error_of(project(SAGEMAKER_BASE + "data:\n  train: {sorce: s3://b/x}\n"))
    assert "did you mean 'source'" in str(error)


@pytest.mark.parametrize(
    ("cloud", "source", "readable"),
    [
        ("vertex", "gs://b/x", True),
        ("vertex", "s3://b/x", False),
        ("sagemaker", "s3://b/x", True),
        ("sagemaker", "gs://b/x", False),
        ("vertex", "/data/x", True),
        ("sagemaker", "data", True),
        ("local", "s3://b/x", True),
        ("local", "gs://b/x", True),
        ("vertex", "http://x/y", False),
    ],
)
def test_cloud_can_read(cloud, source, readable):
    assert cloud_can_read(cloud, source) is readable
    if cloud != "local":
        assert (scheme_problem(cloud, source) is None) is readable


def test_sagemaker_takes_at_most_twenty_channels(project):
    many = "".join(f"  c{i}: s3://b/{i}\n" for i in range(21))
    error = error_of(project(SAGEMAKER_BASE + "data:\n" + many))
    assert error.field == "data" and "21 channels; SageMaker allows at most 20" in str(error)
