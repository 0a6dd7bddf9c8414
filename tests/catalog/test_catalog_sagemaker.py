"""SageMaker: instance types with their GPUs, and TF images from sagemaker-core's own table."""

from __future__ import annotations

import pytest

from cloudtrain import catalog
from cloudtrain.catalog import CatalogError


@pytest.mark.parametrize(
    ("instance", "accelerator", "count", "expected"),
    [
        ("ml.m5.xlarge", None, 0, (None, 0, None)),
        ("ml.c5.2xlarge", None, None, (None, 0, None)),
        ("ml.g4dn.12xlarge", None, 0, ("T4", 4, 16.0)),
        ("ml.g4dn.12xlarge", "NVIDIA_TESLA_T4", 4, ("T4", 4, 16.0)),
        ("ml.g4dn.xlarge", "t4", None, ("T4", 1, 16.0)),
        ("ml.p3.8xlarge", "V100", 4, ("V100", 4, 16.0)),
        ("ml.p3dn.24xlarge", "NVIDIA_TESLA_V100", 8, ("V100-32GB", 8, 32.0)),
        ("ml.p4d.24xlarge", "A100", 8, ("A100", 8, 40.0)),
        ("ml.p4de.24xlarge", "NVIDIA_A100_80GB", 0, ("A100-80GB", 8, 80.0)),
        ("ml.p5.48xlarge", "NVIDIA_H100_80GB", 8, ("H100", 8, 80.0)),
        ("ml.g5.48xlarge", "A10G", 8, ("A10G", 8, 24.0)),
        ("ml.g6.12xlarge", "NVIDIA_L4", 4, ("L4", 4, 24.0)),
        ("ml.g6e.xlarge", None, 1, ("L40S", 1, 48.0)),
    ],
)
def test_instance_types_imply_their_gpus(instance, accelerator, count, expected):
    info = catalog.resolve_machine("sagemaker", instance, accelerator, count)
    gpu_memory = info.gpu.memory_gb if info.gpu else None
    assert (info.accelerator, info.accelerator_count, gpu_memory) == expected
    assert info.price_per_hour and info.price_per_hour > 0
    assert (info.price_region, info.price_date) == ("us-east-1", "2025-01")


def test_gpu_mismatch_names_instances_with_that_gpu():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("sagemaker", "ml.g5.xlarge", "T4", 1)
    assert "ml.g5.xlarge comes with 1 × A10G; it cannot take accelerator T4" in str(caught.value)
    assert caught.value.alternatives[0] == "ml.g4dn.xlarge (1 × T4)"


def test_count_mismatch_names_the_bigger_instance():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("sagemaker", "ml.g4dn.xlarge", "T4", 4)
    assert caught.value.field == "accelerator_count"
    assert caught.value.alternatives[0] == "ml.g4dn.12xlarge (4 × T4)"


def test_cpu_instance_with_a_gpu():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("sagemaker", "ml.m5.xlarge", "NVIDIA_TESLA_T4", 1)
    assert "ml.m5.xlarge has no GPU" in str(caught.value)
    assert caught.value.alternatives[0] == "ml.g4dn.xlarge (1 × T4)"


def test_unknown_instance_type_did_you_mean():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("sagemaker", "ml.p3.2xlrage", None, 0)
    assert caught.value.alternatives[0] == "ml.p3.2xlarge"
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("sagemaker", "n1-standard-16", "T4", 4)
    assert "is a vertex machine type" in str(caught.value)


@pytest.mark.parametrize(
    ("region", "version", "gpu", "uri"),
    [
        ("us-east-1", "2.13", True, "763104351884.dkr.ecr.us-east-1.amazonaws.com/tensorflow-training:2.13-gpu-py310"),
        ("us-west-2", "2.11", False, "763104351884.dkr.ecr.us-west-2.amazonaws.com/tensorflow-training:2.11-cpu-py39"),
        (
            "eu-west-1",
            "2.14.1",
            True,
            "763104351884.dkr.ecr.eu-west-1.amazonaws.com/tensorflow-training:2.14.1-gpu-py310",
        ),
        (
            "af-south-1",
            "2.16",
            True,
            "626614931356.dkr.ecr.af-south-1.amazonaws.com/tensorflow-training:2.16-gpu-py310",
        ),
        (
            "cn-north-1",
            "2.13",
            False,
            "727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/tensorflow-training:2.13-cpu-py310",
        ),
        ("us-east-1", "2.19", True, "763104351884.dkr.ecr.us-east-1.amazonaws.com/tensorflow-training:2.19-gpu-py312"),
    ],
)
def test_sagemaker_training_images(region, version, gpu, uri):
    assert catalog.training_image("sagemaker", region, version, gpu) == uri


def test_sagemaker_versions_come_from_the_sdk_table():
    versions = catalog.tensorflow_versions("sagemaker")
    assert {"2.11", "2.13", "2.16", "2.19"} <= set(versions)
    assert {"2.0", "2.1", "2.2", "2.3"} <= set(versions)  # every TF 2 image in the SDK's table
    assert "1.15" not in versions  # TensorFlow 1 maps to the newest TF 2 image, on every path
    assert list(versions) == sorted(versions, key=lambda v: tuple(map(int, v.split("."))))
    assert catalog.default_tensorflow("sagemaker") == versions[-1]


def test_sagemaker_python_version_choice():
    uri = catalog.training_image("sagemaker", "us-east-1", "2.19", True, py_version="py312")
    assert uri.endswith("tensorflow-training:2.19-gpu-py312")
    with pytest.raises(CatalogError) as caught:
        catalog.training_image("sagemaker", "us-east-1", "2.13", True, py_version="py38")
    assert "has Python py310, not py38" in str(caught.value)


def test_sagemaker_missing_version_names_the_available_ones():
    with pytest.raises(CatalogError) as caught:
        catalog.training_image("sagemaker", "us-east-1", "2.15", True)
    assert caught.value.field == "tensorflow"
    assert "SageMaker has no TensorFlow 2.15 training image; available: 2.0, 2.1," in str(caught.value)
    assert set(caught.value.alternatives) == {"2.14", "2.16"}
