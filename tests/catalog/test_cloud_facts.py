"""The catalog's code names no cloud: the clouds, their order, titles and tables come from data/clouds.json,
and the messages built from them read as they always did."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cloudtrain import catalog
from cloudtrain.catalog import CatalogError, cloud_facts, crosscloud
from cloudtrain.catalog._data import DATA_DIR, load
from tests.conftest import REPO


def test_the_clouds_and_their_order_are_the_data_s():
    assert catalog.clouds() == tuple(load("clouds")["clouds"]) == ("vertex", "sagemaker")
    assert [catalog.title(c) for c in catalog.clouds()] == ["Vertex AI", "SageMaker"]
    assert catalog.tpu_cloud() == "vertex"


def test_each_table_belongs_to_the_cloud_that_names_it():
    for cloud in catalog.clouds():
        assert load(cloud_facts.table_name(cloud))["cloud"] == cloud
        assert cloud_facts.nearest_regions_table(cloud) in load("crosscloud")
    assert load(cloud_facts.tpu_table())["cloud"] == cloud_facts.tpu_cloud()
    assert {m.cloud for m in catalog.tpus.machines()} == {"vertex"}


def test_the_region_tables_lead_each_way():
    assert crosscloud.nearest_region("sagemaker", "us-central1") == "us-east-2"
    assert crosscloud.nearest_region("vertex", "us-east-1") == "us-east4"


def test_only_a_cloud_with_its_own_accelerator_names_shows_them():
    records = [catalog.machine_record(m) for m in catalog.machines(gpu="T4")]
    by_cloud = {c: {r["cloud_accelerator"] for r in records if r["cloud"] == c} for c in catalog.clouds()}
    assert by_cloud == {"vertex": {"NVIDIA_TESLA_T4"}, "sagemaker": {None}}


def _message(call, *args, **kwargs) -> str:
    with pytest.raises(CatalogError) as caught:
        call(*args, **kwargs)
    return str(caught.value)


def test_the_messages_name_each_cloud_by_its_title():
    assert _message(catalog.resolve_machine, "sagemaker", "ct5lp-hightpu-4t", None, None) == (
        "ct5lp-hightpu-4t is a Vertex AI TPU VM and SageMaker has no TPUs; give SageMaker a GPU machine "
        "(cloudtrain machines --backend sagemaker) and keep the TPU on backend: vertex, one of them as a "
        "fallback: entry (docs/how-to/tpu.md)"
    )
    assert _message(catalog.training_image, "vertex", "us-central1", "2.99", True) == (
        "Vertex AI has no prebuilt TensorFlow 2.99 training image; available: 2.11, 2.12, 2.13, 2.14, 2.15, 2.16, 2.17"
    )
    assert _message(catalog.training_image, "vertex", "us-central1", "2.17", True, py_version="py312") == (
        "the Vertex AI TensorFlow 2.17 image has Python py310, not py312"
    )
    assert _message(catalog.training_image, "sagemaker", "us-east-1", "2.13", True, py_version="py38") == (
        "the SageMaker TensorFlow 2.13 image has Python py310, not py38"
    )
    assert _message(catalog.training_image, "vertex", "us-central1", "2.16", False, tpu=True) == (
        "Vertex AI has no prebuilt TensorFlow 2.16 image for TPUs (TPU images: 2.15); "
        "or set image.uri to your own image with tensorflow and libtpu"
    )


def test_the_tpu_job_messages_name_the_tpu_cloud():
    v5e = catalog.resolve_machine("vertex", "ct5lp-hightpu-4t", None, None)
    job = {"topology": None, "replica_count": 1, "tensorflow": "2.15", "own_image": False}
    assert _message(catalog.check_tpu_job, v5e, **{**job, "region": "us-east1"}) == (
        "Vertex AI offers TPU_V5_LITEPOD (TPU v5e) in us-central1, us-west4, us-west1, europe-west4, not us-east1"
    )
    assert _message(catalog.check_tpu_job, v5e, **{**job, "region": "us-central1", "tensorflow": "2.14"}) == (
        "TPUs need TensorFlow 2.15 or newer on Vertex AI; received 2.14"
    )


_WITH_A_THIRD_CLOUD = """
import json, sys
from pathlib import Path

from cloudtrain.catalog import _data

_data.DATA_DIR = Path(sys.argv[1])  # before the first read: every table comes from this copy
from cloudtrain import catalog


def message(call, *args):
    try:
        call(*args)
    except catalog.CatalogError as exc:
        return str(exc)
    return None


rows = catalog.machines()
print(json.dumps({
    "clouds": catalog.clouds(),
    "order": list(dict.fromkeys(m.cloud for m in rows)),
    "accelerators": sorted({str(catalog.machine_record(m)["cloud_accelerator"]) for m in rows if m.cloud == "third"}),
    "region": message(catalog.check_region, "vertex", "us-east-1"),
    "tpu": message(catalog.resolve_machine, "third", "ct5lp-hightpu-4t", None, None),
    "image": message(catalog.training_image, "third", "us-east-1", "2.15", True),
}))
"""


def test_a_cloud_added_to_the_data_is_listed_checked_and_named(tmp_path: Path):
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    third = {**load("sagemaker"), "cloud": "third"}
    (data / "third.json").write_text(json.dumps(third), encoding="utf-8")
    clouds = load("clouds")
    entry = {"title": "Third Cloud", "table": "third", "own_accelerator_names": False, "nearest_regions": "x"}
    (data / "clouds.json").write_text(json.dumps({"clouds": {**clouds["clouds"], "third": entry}}), encoding="utf-8")

    done = subprocess.run(
        [sys.executable, "-c", _WITH_A_THIRD_CLOUD, str(data)], cwd=REPO, capture_output=True, text=True, check=True
    )
    seen = json.loads(done.stdout)

    assert seen["clouds"] == ["vertex", "sagemaker", "third"]
    assert seen["order"] == ["vertex", "sagemaker", "third"]
    assert seen["accelerators"] == ["None"]
    assert seen["region"].startswith(
        "vertex has no region 'us-east-1' (us-east-1 is a sagemaker region) (us-east-1 is a third region); "
    )
    assert seen["tpu"].startswith("ct5lp-hightpu-4t is a Vertex AI TPU VM and Third Cloud has no TPUs; ")
    assert "(cloudtrain machines --backend third)" in seen["tpu"]
    assert seen["image"].startswith("Third Cloud has no TensorFlow 2.15 training image; available: 2.0, ")
