"""``container:`` (Vertex containerSpec): the user's own image runs as it is. Each cloud's request is checked
by its own library; nothing is packaged; where it cannot run, one line says what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from cloudtrain.config.load import load_config
from cloudtrain.errors import UsageError
from cloudtrain.spec import build_spec

ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com/mnist:1"
CONTAINER = """\
container: {image_uri: IMAGE, command: [python, -m, trainer.task]}
args: [--epochs=3]
hyperparameters: {learning_rate: 0.01}
env: {TF_CPP_MIN_LOG_LEVEL: "1"}
"""
CLOUDS = {
    "vertex": """\
name: mnist-container
backend: vertex
region: us-central1
project: my-project
output_dir: gs://my-bucket/outputs/mnist
machine: {type: n1-standard-16, accelerator: NVIDIA_TESLA_T4, accelerator_count: 4}
replica_count: 2
data: {training: gs://my-bucket/mnist/}
""",
    "sagemaker": """\
name: mnist-container
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
output_dir: s3://my-bucket/outputs
machine: {type: ml.g4dn.12xlarge}
replica_count: 2
data: {training: s3://my-bucket/mnist/}
""",
}


def write(tmp_path: Path, cloud: str, image: str, extra: str = "") -> Path:
    path = tmp_path / f"{cloud}.yaml"
    path.write_text(CLOUDS[cloud] + CONTAINER.replace("IMAGE", image) + extra)
    return path


def render(path: Path, **load):
    from cloudtrain.backends import get_backend

    spec = build_spec(load_config(path, **load))
    return spec, get_backend(spec.backend).render(spec, None)


def test_vertex_gets_a_container_spec_that_aiplatform_v1_accepts(tmp_path):
    from google.cloud.aiplatform_v1.types import CustomJob
    from google.protobuf import json_format

    spec, body = render(write(tmp_path, "vertex", "us-docker.pkg.dev/my-project/train/mnist:1"))
    message = json_format.ParseDict(body, CustomJob.pb(CustomJob()), ignore_unknown_fields=False)
    assert json_format.MessageToDict(message) == body
    pools = body["jobSpec"]["workerPoolSpecs"]
    assert [p["replicaCount"] for p in pools] == ["1", "1"]
    for pool in pools:
        assert "pythonPackageSpec" not in pool
        assert pool["containerSpec"] == {
            "imageUri": "us-docker.pkg.dev/my-project/train/mnist:1",
            "command": ["python", "-m", "trainer.task"],
            "args": ["--epochs=3", "--learning_rate=0.01"],
            "env": [
                {"name": "TF_CPP_MIN_LOG_LEVEL", "value": "1"},
                {"name": "SM_CHANNEL_TRAINING", "value": "/gcs/my-bucket/mnist"},
            ],
        }
    assert body["jobSpec"]["baseOutputDirectory"] == {"outputUriPrefix": "gs://my-bucket/outputs/mnist"}
    assert spec.staging_bucket is None  # nothing is staged: the output dir is enough


def test_no_command_keeps_the_images_entrypoint(tmp_path):
    path = tmp_path / "v.yaml"
    path.write_text(CLOUDS["vertex"] + "container: {image_uri: gcr.io/p/t:1}\n")
    _, body = render(path)
    code = body["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    assert "command" not in code and "args" not in code and code["imageUri"] == "gcr.io/p/t:1"


def test_sagemaker_runs_an_ecr_image_with_entrypoint_and_arguments_botocore_accepts(tmp_path):
    from botocore.validate import validate_parameters

    from tests.backends.sagemaker.test_sagemaker_request import _input_shape, _strict

    _, params = render(write(tmp_path, "sagemaker", ECR))
    validate_parameters(params, _input_shape())
    assert _strict(_input_shape(), params) == []
    assert params["AlgorithmSpecification"] == {
        "TrainingImage": ECR,
        "TrainingInputMode": "File",
        "ContainerEntrypoint": ["python", "-m", "trainer.task"],
        "ContainerArguments": ["--epochs=3", "--learning_rate=0.01"],
    }
    from cloudtrain.backends.sagemaker.request import REQUEST_HASH

    assert list(params["HyperParameters"]) == [REQUEST_HASH]  # no launcher, no source dir: the image is the program
    assert params["Environment"] == {"TF_CPP_MIN_LOG_LEVEL": "1"}
    assert params["InputDataConfig"][0]["ChannelName"] == "training"


@pytest.mark.parametrize(
    "image", ["gcr.io/my-project/mnist:1", "us-docker.pkg.dev/my-project/train/mnist:1", "docker.io/me/mnist:1"]
)
def test_sagemaker_refuses_an_image_outside_ecr_naming_the_fix(tmp_path, image):
    with pytest.raises(UsageError) as info:
        load_config(write(tmp_path, "sagemaker", image))
    text = str(info.value)
    assert "ECR" in text and "container.image_uri" in text and image in text and "\n" not in text


def test_a_vertex_container_job_moved_to_sagemaker_keeps_the_ecr_rule(tmp_path):
    path = write(tmp_path, "vertex", "gcr.io/my-project/mnist:1")
    moved = [
        "backend=sagemaker",
        "role_arn=arn:aws:iam::123456789012:role/R",
        "output_dir=s3://b/out",
        "data.training=s3://b/mnist/",
    ]
    with pytest.raises(UsageError, match="push the image to ECR"):
        load_config(path, moved)
    path.write_text(path.read_text().replace("gcr.io/my-project/mnist:1", ECR))
    _, params = render(path, overrides=moved)
    assert params["AlgorithmSpecification"]["TrainingImage"] == ECR


def test_local_refuses_in_one_line(tmp_path):
    with pytest.raises(UsageError) as info:
        load_config(write(tmp_path, "vertex", "gcr.io/p/t:1"), local=True)
    text = str(info.value)
    assert "does not start containers" in text and "docker" in text and "package" in text
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    "extra",
    [
        "package: {path: trainer}\n",
        'image: {tensorflow: "2.16"}\n',
        "sweep: {metric: acc, params: {lr: {min: 0.001, max: 0.1}}}\n",
    ],
)
def test_package_settings_beside_a_container_are_refused(tmp_path, extra):
    with pytest.raises(UsageError, match="container"):
        load_config(write(tmp_path, "vertex", "gcr.io/p/t:1", extra))


def test_local_data_still_needs_a_staging_bucket(tmp_path):
    (tmp_path / "mnist").mkdir()
    path = write(tmp_path, "vertex", "gcr.io/p/t:1")
    path.write_text(path.read_text().replace("gs://my-bucket/mnist/", "mnist"))
    with pytest.raises(UsageError, match="staging bucket"):
        load_config(path)
