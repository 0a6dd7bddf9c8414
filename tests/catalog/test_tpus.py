"""Vertex AI TPU VMs in the catalog: the forms Vertex takes, their refusals, prices and images."""

from __future__ import annotations

import pytest

from cloudtrain import catalog
from cloudtrain.catalog import tpus
from cloudtrain.catalog.records import TpuInfo


def tpu_of(machine_type: str, accelerator: str | None, count: int | None) -> TpuInfo:
    tpu = catalog.resolve_machine("vertex", machine_type, accelerator, count).tpu
    assert tpu is not None, f"{machine_type} is not a TPU machine"
    return tpu


def test_v5e_types_have_their_chips_topology_and_price():
    m = catalog.resolve_machine("vertex", "ct5lp-hightpu-4t", None, None)
    assert (m.accelerator, m.accelerator_count, m.gpu) == ("TPU_V5_LITEPOD", 4, None)
    assert m.tpu is not None
    assert (m.tpu.generation, m.tpu.chips, m.tpu.cores, m.tpu.topology) == ("v5e", 4, 4, "2x2")
    assert (m.price_per_hour, m.price_region, m.price_date) == (5.52, "us-central1", "2025-01")
    assert tpu_of("ct5lp-hightpu-8t", "TPU_V5_LITEPOD", 8).topology == "2x4"
    assert tpu_of("ct5lp-hightpu-1t", None, None).topology == "1x1"


def test_cloud_tpu_takes_v2_or_v3_with_eight_cores():
    v3 = catalog.resolve_machine("vertex", "cloud-tpu", "tpu-v3", 8)
    assert v3.tpu is not None
    got = (v3.accelerator, v3.accelerator_count, v3.tpu.chips, v3.tpu.cores, v3.tpu.topology)
    assert got == ("TPU_V3", 8, 4, 8, None)
    assert catalog.resolve_machine("vertex", "cloud-tpu", "TPU_V2", None).price_per_hour == 5.175


@pytest.mark.parametrize(
    "machine, accelerator, count, field, words, alternative",
    [
        (
            "ct5lp-hightpu-4t",
            "NVIDIA_TESLA_T4",
            1,
            "accelerator",
            "TPUs and GPUs never share a machine",
            "ct5lp-hightpu-4t (TPU v5e, 4 chips, 2x2)",
        ),
        (
            "cloud-tpu",
            "TPU_V3",
            32,
            "accelerator_count",
            "multi-host TPU slices (pods) are not supported yet",
            "cloud-tpu with 8 × TPU_V3 (TPU v3, 4 chips, 8 cores)",
        ),
        (
            "cloud-tpu",
            None,
            0,
            "accelerator",
            "cloud-tpu needs an accelerator: TPU_V2, TPU_V3",
            "cloud-tpu with 8 × TPU_V2 (TPU v2, 4 chips, 8 cores)",
        ),
        (
            "ct5lp-hightpu-4t",
            None,
            8,
            "accelerator_count",
            "has 4 chips; received accelerator_count 8",
            "ct5lp-hightpu-8t (TPU v5e, 8 chips, 2x4)",
        ),
        (
            "cloud-tpu",
            "TPU_V5_LITEPOD",
            8,
            "accelerator",
            "takes TPU_V2 or TPU_V3, not TPU_V5_LITEPOD",
            "cloud-tpu with 8 × TPU_V3 (TPU v3, 4 chips, 8 cores)",
        ),
    ],
)
def test_wrong_tpu_forms_say_why_and_name_the_nearest(machine, accelerator, count, field, words, alternative):
    with pytest.raises(catalog.CatalogError) as info:
        catalog.resolve_machine("vertex", machine, accelerator, count)
    assert info.value.field == field and words in str(info.value)
    assert "\n" not in str(info.value)
    assert alternative in info.value.alternatives


def test_a_mistyped_tpu_type_suggests_the_real_ones():
    with pytest.raises(catalog.CatalogError) as info:
        catalog.resolve_machine("vertex", "ct5lp-hightpu-2t", None, None)
    assert info.value.alternatives[:1] and info.value.alternatives[0].startswith("ct5lp-hightpu-")


def test_sagemaker_has_no_tpus_and_points_at_fallback():
    with pytest.raises(catalog.CatalogError) as info:
        catalog.resolve_machine("sagemaker", "ct5lp-hightpu-4t", None, None)
    assert "SageMaker has no TPUs" in str(info.value) and "fallback:" in str(info.value)
    assert info.value.field == "machine_type"


def test_tpu_image_is_the_prebuilt_tpu_container_for_the_region():
    assert catalog.training_image("vertex", "europe-west4", "2.15.1", False, tpu=True) == (
        "europe-docker.pkg.dev/vertex-ai/training/tf-tpu.2-15.cp310:latest"
    )
    assert catalog.default_tensorflow("vertex", tpu=True) == "2.15"


def test_tpu_needs_tensorflow_2_15_and_a_tpu_image():
    with pytest.raises(catalog.CatalogError, match="TPUs need TensorFlow 2.15 or newer"):
        catalog.training_image("vertex", "us-central1", "2.14", False, tpu=True)
    with pytest.raises(catalog.CatalogError) as info:
        catalog.training_image("vertex", "us-central1", "2.17", False, tpu=True)
    assert "no prebuilt TensorFlow 2.17 image for TPUs" in str(info.value) and info.value.alternatives == ("2.15",)


def test_region_check_names_where_the_tpu_is():
    v3 = catalog.resolve_machine("vertex", "cloud-tpu", "TPU_V3", 8)
    tpus.check_region(v3, "europe-west4")
    with pytest.raises(catalog.CatalogError) as info:
        tpus.check_region(v3, "us-west4")
    assert "TPU_V3 (TPU v3) in us-central1, europe-west4, not us-west4" in str(info.value)
    assert "us-west4 has TPU_V5_LITEPOD" in str(info.value) and info.value.field == "region"


def test_topology_is_the_types_own_or_refused():
    m = catalog.resolve_machine("vertex", "ct5lp-hightpu-4t", None, None)
    tpus.check_topology(m, "2x2")
    with pytest.raises(catalog.CatalogError, match="spans several TPU VMs"):
        tpus.check_topology(m, "4x4")
    with pytest.raises(catalog.CatalogError) as info:
        tpus.check_topology(m, "2x4")
    assert "ct5lp-hightpu-8t (TPU v5e, 8 chips, 2x4)" in info.value.alternatives


def test_tpus_stay_out_of_the_gpu_tables():
    """No GPU mapping (legacy, the other cloud, fallbacks) can land on a TPU by accident."""
    assert not any(m.machine_type in tpus.machine_types() for m in catalog.machines("vertex", every_combination=True))
    assert [m.machine_type for m in catalog.tpus.machines()][:1] == ["ct5lp-hightpu-1t"]  # cheapest first


def test_every_tpu_fact_names_its_source_and_date():
    from cloudtrain.catalog._data import load

    data = load("vertex_tpus")
    assert set(data["_source"]) >= {"machine_types", "topologies", "regions", "tensorflow_images"}
    assert data["price"]["date"] and data["price"]["region"] == "us-central1"
