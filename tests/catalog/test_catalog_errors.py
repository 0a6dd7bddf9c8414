"""Regions, clouds, counts: what every refusal looks like."""

from __future__ import annotations

import pytest

from cloudtrain import catalog
from cloudtrain.catalog import CatalogError
from cloudtrain.errors import UsageError


def test_catalog_error_is_a_usage_error_and_a_value_error():
    err = CatalogError("bad", ["good"], field="region")
    assert isinstance(err, UsageError) and isinstance(err, ValueError)
    assert err.exit_code == 2
    assert str(err) == "bad"
    assert err.alternatives == ("good",) and err.field == "region"
    assert CatalogError("bad").alternatives == ()


def test_clouds():
    assert catalog.clouds() == ("vertex", "sagemaker")


@pytest.mark.parametrize(
    "cloud, region",
    [("vertex", "us-central1"), ("vertex", "europe-west4"), ("sagemaker", "us-east-1"), ("sagemaker", "cn-north-1")],
)
def test_known_regions(cloud, region):
    catalog.check_region(cloud, region)
    assert region in catalog.regions(cloud)


def test_unknown_region_did_you_mean():
    with pytest.raises(CatalogError) as caught:
        catalog.check_region("vertex", "us-centrall1")
    err = caught.value
    assert err.field == "region"
    assert "vertex has no region 'us-centrall1'" in str(err)
    assert "us-central1" in str(err)  # the allowed list
    assert err.alternatives[0] == "us-central1"


def test_region_of_the_other_cloud_says_so():
    with pytest.raises(CatalogError) as caught:
        catalog.check_region("vertex", "us-east-1")
    assert "(us-east-1 is a sagemaker region)" in str(caught.value)
    assert caught.value.alternatives[0] == "us-east1"
    with pytest.raises(CatalogError) as caught:
        catalog.check_region("sagemaker", "europe-west1")
    assert "(europe-west1 is a vertex region)" in str(caught.value)


def test_training_image_checks_the_region_first():
    with pytest.raises(CatalogError) as caught:
        catalog.training_image("sagemaker", "us-east-7", "2.13", True)
    assert caught.value.field == "region"


def test_unknown_cloud():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("vertx", "n1-standard-4", None, 0)
    assert caught.value.field == "cloud"
    assert caught.value.alternatives == ("vertex",)
    with pytest.raises(CatalogError):
        catalog.tensorflow_versions("aws")


@pytest.mark.parametrize("cloud, machine", [("vertex", "n1-standard-8"), ("sagemaker", "ml.g4dn.xlarge")])
def test_negative_count(cloud, machine):
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine(cloud, machine, None, -1)
    assert caught.value.field == "accelerator_count"
    assert "received -1" in str(caught.value)


def test_messages_point_at_the_right_setting():
    """config/checks.py picks the offending key from the message; keep the words it looks for."""
    cases = {
        ("vertex", "n1-standard-4", "NVIDIA_TESLA_T4", 3): "count",
        ("vertex", "n1-standard-8", "NVIDIA_L4", 1): "accelerator",
        ("vertex", "n1-standrd-8", None, 0): None,
    }
    for args, word in cases.items():
        with pytest.raises(CatalogError) as caught:
            catalog.resolve_machine(*args)
        message = str(caught.value)
        if word == "count":
            assert "count" in message
        elif word == "accelerator":
            assert "accelerator" in message and "count" not in message
        else:
            assert "accelerator" not in message and "count" not in message
