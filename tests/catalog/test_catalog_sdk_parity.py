"""Our SageMaker image URIs equal what sagemaker-core's own image_uris.retrieve returns.

Imports sagemaker.core (seconds), hence slow; the catalog itself never does.
"""

from __future__ import annotations

import logging

import pytest

from cloudtrain import catalog

pytestmark = pytest.mark.slow

REGIONS = (
    "us-east-1",
    "us-west-2",
    "eu-central-1",
    "ap-northeast-3",
    "af-south-1",
    "cn-northwest-1",
    "us-gov-west-1",
    "il-central-1",
)
INSTANCES = {True: "ml.g4dn.xlarge", False: "ml.m5.xlarge"}


@pytest.fixture(scope="module")
def retrieve():
    logging.getLogger("sagemaker").setLevel(logging.WARNING)
    from sagemaker.core import image_uris

    return image_uris.retrieve


def _py_versions(version: str) -> list[str]:
    from cloudtrain.catalog.images_sdk_table import _config, _images
    from cloudtrain.catalog.table import table

    config = _config(_images(table("sagemaker")), version)
    assert config is not None, f"no SageMaker TensorFlow image config for {version}"
    return config["py_versions"]


@pytest.mark.parametrize("version", catalog.tensorflow_versions("sagemaker"))
@pytest.mark.parametrize("gpu", [True, False])
def test_uri_equals_sdk_retrieve(retrieve, version, gpu):
    for region in REGIONS:
        for py in _py_versions(version):
            try:
                ours = catalog.training_image("sagemaker", region, version, gpu, py_version=py)
            except catalog.CatalogError:  # an old image not in a newer region: the SDK refuses it too
                with pytest.raises(ValueError):
                    retrieve(
                        "tensorflow",
                        region=region,
                        version=version,
                        instance_type=INSTANCES[gpu],
                        image_scope="training",
                        py_version=py,
                    )
                continue
            theirs = retrieve(
                "tensorflow",
                region=region,
                version=version,
                instance_type=INSTANCES[gpu],
                image_scope="training",
                py_version=py,
            )
            assert ours == theirs, (region, version, py)


@pytest.mark.parametrize("version", ["2.13.0", "2.16.2", "2.19.0"])
def test_full_versions_too(retrieve, version):
    ours = catalog.training_image("sagemaker", "eu-west-1", version, True)
    theirs = retrieve(
        "tensorflow",
        region="eu-west-1",
        version=version,
        instance_type="ml.p3.2xlarge",
        image_scope="training",
        py_version=ours.rsplit("-", 1)[1],
    )
    assert ours == theirs


def test_default_matches_sdk_latest(retrieve):
    from sagemaker.core import image_uris

    newest = max(image_uris.list_versions("tensorflow", "training"), key=lambda v: tuple(map(int, v.split("."))))
    assert catalog.default_tensorflow("sagemaker") == ".".join(newest.split(".")[:2])
