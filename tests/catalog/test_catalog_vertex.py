"""Vertex AI: machine types, accelerators and counts, images — all from data/vertex.json."""

from __future__ import annotations

import pytest

from cloudtrain import catalog
from cloudtrain.catalog import CatalogError


@pytest.mark.parametrize(
    ("machine", "accelerator", "count"),
    [
        ("n1-standard-4", None, 0),
        ("n1-highcpu-16", None, None),
        ("n1-standard-16", "NVIDIA_TESLA_T4", 4),
        ("n1-standard-4", "NVIDIA_TESLA_V100", 8),
        ("n1-standard-8", "NVIDIA_TESLA_V100", 1),
        ("n1-highmem-16", "NVIDIA_TESLA_P100", 1),
        ("n1-standard-32", "NVIDIA_TESLA_P4", 2),
        ("n1-standard-96", "NVIDIA_TESLA_T4", 4),
        ("n1-standard-96", "NVIDIA_TESLA_V100", 8),
    ],
)
def test_valid_n1_combinations(machine, accelerator, count):
    info = catalog.resolve_machine("vertex", machine, accelerator, count)
    assert info.machine_type == machine
    assert info.accelerator == accelerator
    assert info.accelerator_count == (count or 0)
    assert (info.gpu is None) == (accelerator is None)


def test_gpu4_config_resolves_with_model_and_price():
    info = catalog.resolve_machine("vertex", "n1-standard-16", "NVIDIA_TESLA_T4", 4)
    assert info.gpu == catalog.GpuModel("T4", 16.0, "7.5")
    assert info.vcpus == 16 and info.memory_gb == 60
    assert info.gpu_memory_gb == 64
    machine_only = catalog.resolve_machine("vertex", "n1-standard-16", None, 0).price_per_hour
    assert machine_only is not None
    assert info.price_per_hour == pytest.approx(machine_only + 4 * 0.4025)
    assert (info.price_region, info.price_date) == ("us-central1", "2025-01")


@pytest.mark.parametrize(
    ("machine", "accelerator", "count", "implied"),
    [
        ("a2-highgpu-4g", None, 0, ("NVIDIA_TESLA_A100", 4, "A100")),
        ("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1, ("NVIDIA_TESLA_A100", 1, "A100")),
        ("a2-megagpu-16g", None, None, ("NVIDIA_TESLA_A100", 16, "A100")),
        ("a2-ultragpu-8g", "nvidia-a100-80gb", 8, ("NVIDIA_A100_80GB", 8, "A100-80GB")),
        ("a3-highgpu-8g", "H100", 0, ("NVIDIA_H100_80GB", 8, "H100")),
        ("g2-standard-24", None, 2, ("NVIDIA_L4", 2, "L4")),
        ("g2-standard-4", "L4", None, ("NVIDIA_L4", 1, "L4")),
    ],
)
def test_built_in_gpus_may_be_omitted_and_must_match(machine, accelerator, count, implied):
    info = catalog.resolve_machine("vertex", machine, accelerator, count)
    assert info.gpu is not None
    assert (info.accelerator, info.accelerator_count, info.gpu.name) == implied
    assert info.price_per_hour and info.price_per_hour > 0


@pytest.mark.parametrize("spelling", ["NVIDIA_TESLA_T4", "nvidia-tesla-t4", "T4", "t4", "Tesla T4"])
def test_accelerator_spellings_resolve_to_the_vertex_enum(spelling):
    assert catalog.resolve_machine("vertex", "n1-standard-8", spelling, 1).accelerator == "NVIDIA_TESLA_T4"


def test_n1_counts_follow_vcpus_and_memory():
    def counts(machine: str, accelerator: str) -> list[int]:
        return [n for n in (1, 2, 4, 8) if _ok(machine, accelerator, n)]

    assert counts("n1-standard-4", "NVIDIA_TESLA_V100") == [1, 2, 4, 8]
    assert counts("n1-standard-16", "NVIDIA_TESLA_V100") == [2, 4, 8]
    assert counts("n1-standard-32", "NVIDIA_TESLA_V100") == [4, 8]
    assert counts("n1-standard-64", "NVIDIA_TESLA_V100") == [8]
    assert counts("n1-standard-64", "NVIDIA_TESLA_T4") == [4]
    assert counts("n1-highmem-32", "NVIDIA_TESLA_P100") == [2, 4]
    assert counts("n1-standard-64", "NVIDIA_TESLA_P100") == []  # 240 GB is over P100's 208 GB
    assert counts("n1-highmem-2", "NVIDIA_TESLA_T4") == [1, 2, 4]


def _ok(machine: str, accelerator: str, count: int) -> bool:
    try:
        catalog.resolve_machine("vertex", machine, accelerator, count)
    except CatalogError:
        return False
    return True


def test_count_not_allowed_for_vcpus_names_smaller_machine_and_other_counts():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("vertex", "n1-standard-32", "NVIDIA_TESLA_V100", 1)
    err = caught.value
    assert err.field == "accelerator_count"
    assert "n1-standard-32 (32 vCPUs, 120 GB)" in str(err)
    assert "accelerator_count 4, 8, received 1" in str(err)
    assert "at most 12 vCPUs and 78 GB" in str(err)
    assert err.alternatives[:3] == (
        "n1-standard-8 with 1 × NVIDIA_TESLA_V100",
        "n1-standard-32 with 4 × NVIDIA_TESLA_V100",
        "n1-standard-32 with 8 × NVIDIA_TESLA_V100",
    )


def test_count_that_the_gpu_never_comes_in():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("vertex", "n1-standard-16", "NVIDIA_TESLA_T4", 8)
    err = caught.value
    assert "NVIDIA_TESLA_T4 comes in accelerator_count 1, 2, 4" in str(err)
    assert "n1-standard-16 with 4 × NVIDIA_TESLA_T4" in err.alternatives
    assert "n1-standard-16 with 8 × NVIDIA_TESLA_V100" in err.alternatives  # same machine, 8 of another GPU
    assert any(a.endswith("(8 × NVIDIA_L4)") for a in err.alternatives)  # cheapest 8-GPU machine


def test_accelerator_not_on_family():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("vertex", "n1-standard-8", "NVIDIA_L4", 1)
    err = caught.value
    assert err.field == "accelerator"
    assert "n1-standard-8 cannot take accelerator NVIDIA_L4" in str(err)
    assert "NVIDIA_TESLA_T4" in str(err)  # what the family does take
    assert err.alternatives[0] == "g2-standard-8 (1 × NVIDIA_L4)"
    assert "n1-standard-8 with 1 × NVIDIA_TESLA_T4" in err.alternatives


def test_machine_too_big_for_any_count():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("vertex", "n1-standard-64", "NVIDIA_TESLA_P100", 4)
    assert "too big for NVIDIA_TESLA_P100" in str(caught.value)
    assert caught.value.alternatives[0] == "n1-standard-32 with 4 × NVIDIA_TESLA_P100"


def test_built_in_accelerator_mismatch_and_count_mismatch():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("vertex", "a2-highgpu-4g", "NVIDIA_A100_80GB", 4)
    assert "a2-highgpu-4g comes with 4 × NVIDIA_TESLA_A100" in str(caught.value)
    assert caught.value.field == "accelerator"
    assert caught.value.alternatives[0] == "a2-ultragpu-4g (4 × NVIDIA_A100_80GB)"

    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("vertex", "a2-highgpu-4g", None, 8)
    assert caught.value.field == "accelerator_count"
    assert caught.value.alternatives[0] == "a2-highgpu-8g (8 × NVIDIA_TESLA_A100)"


def test_count_without_accelerator_and_accelerator_without_count():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("vertex", "n1-standard-16", None, 4)
    assert "needs an accelerator" in str(caught.value)
    assert caught.value.alternatives[0] == "n1-standard-16 with 4 × NVIDIA_TESLA_T4"

    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("vertex", "n1-standard-8", "NVIDIA_TESLA_T4", 0)
    assert "needs an accelerator_count: 1, 2, 4" in str(caught.value)


def test_unknown_machine_type_did_you_mean():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("vertex", "n1-standrd-16", None, 0)
    assert caught.value.field == "machine_type"
    assert "unknown vertex machine type 'n1-standrd-16'" in str(caught.value)
    assert caught.value.alternatives[0] == "n1-standard-16"


def test_sagemaker_type_on_vertex_says_so():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("vertex", "ml.g4dn.12xlarge", None, 0)
    assert "is a sagemaker machine type" in str(caught.value)


def test_unknown_accelerator_did_you_mean():
    with pytest.raises(CatalogError) as caught:
        catalog.resolve_machine("vertex", "n1-standard-8", "NVIDIA_TESLA_T5", 1)
    assert caught.value.field == "accelerator"
    assert caught.value.alternatives[0] == "NVIDIA_TESLA_T4"


@pytest.mark.parametrize(
    ("region", "gpu", "version", "uri"),
    [
        ("us-central1", True, "2.17", "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-17.py310:latest"),
        ("us-central1", False, "2.15", "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-15.py310:latest"),
        ("europe-west4", True, "2.16", "europe-docker.pkg.dev/vertex-ai/training/tf-gpu.2-16.py310:latest"),
        ("asia-northeast1", False, "2.12", "asia-docker.pkg.dev/vertex-ai/training/tf-cpu.2-12.py310:latest"),
        ("northamerica-northeast1", True, "2.17.1", "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-17.py310:latest"),
    ],
)
def test_vertex_training_images(region, gpu, version, uri):
    assert catalog.training_image("vertex", region, version, gpu) == uri


def test_vertex_tensorflow_versions_and_default():
    versions = catalog.tensorflow_versions("vertex")
    assert versions == ("2.11", "2.12", "2.13", "2.14", "2.15", "2.16", "2.17")
    assert catalog.default_tensorflow("vertex") == "2.17"


def test_vertex_missing_tensorflow_version_names_the_available_ones():
    with pytest.raises(CatalogError) as caught:
        catalog.training_image("vertex", "us-central1", "2.18", True)
    assert caught.value.field == "tensorflow"
    assert "available: 2.11, 2.12, 2.13, 2.14, 2.15, 2.16, 2.17" in str(caught.value)
    assert caught.value.alternatives == ("2.17", "2.16")


def test_every_vertex_region_has_an_image_prefix():
    for region in catalog.regions("vertex"):
        uri = catalog.training_image("vertex", region, "2.17", False)
        assert uri.split("-docker.pkg.dev/")[0] in {"us", "europe", "asia"}
