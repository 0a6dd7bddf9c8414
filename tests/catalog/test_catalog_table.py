"""The data itself: consistent, priced, dated; machines() for the `cloudtrain machines` table."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from cloudtrain import catalog
from cloudtrain.catalog import gpus
from cloudtrain.catalog._data import load
from cloudtrain.catalog.records import MachineInfo
from cloudtrain.catalog.table import table


@pytest.mark.parametrize("cloud", ["vertex", "sagemaker"])
def test_data_is_consistent(cloud):
    data, models = load(cloud), load("gpus")["models"]
    for name, acc in data["accelerators"].items():
        assert acc["gpu"] in models, name
    for series, spec in data["series"].items():
        assert spec.get("accelerator") is None or spec["accelerator"] in data["accelerators"], series
        assert spec.get("attach") is None or spec["attach"] in data["attachable"], series
        for name, t in spec["types"].items():
            assert name.startswith(series), name
            assert t["vcpus"] > 0 and t["memory_gb"] > 0, name
            assert t["price_per_hour"] is None or t["price_per_hour"] > 0, name  # None: not priced, said so
    for rule_set in data.get("attachable", {}).values():
        for acc, rows in rule_set.items():
            assert acc in data["accelerators"] and data["accelerators"][acc].get("price_per_hour"), acc
            assert [r["count"] for r in rows] == sorted(r["count"] for r in rows), acc
    assert data["price"]["date"] and data["price"]["region"] and "pprox" in data["price"]["note"]


@pytest.mark.parametrize("cloud", ["vertex", "sagemaker"])
def test_every_machine_has_a_dated_price(cloud):
    rows = catalog.machines(cloud)
    assert rows
    unpriced = _unpriced(cloud)
    for m in rows:
        assert (m.price_per_hour is not None and m.price_per_hour > 0) or m.machine_type in unpriced, m.machine_type
        assert m.price_date == "2025-01" and m.price_region in {"us-central1", "us-east-1"}
    assert len(unpriced) < len(rows)


def _unpriced(cloud):
    """The types a generator added from an SDK's table (tools/sagemaker_instance_types.py) without a price."""
    from cloudtrain.catalog._data import load

    series = load(cloud)["series"].values()
    return {
        name for s in series for name, t in s["types"].items() if "price_per_hour" in t and t["price_per_hour"] is None
    }


def test_machines_filters_by_gpu_in_any_spelling():
    t4 = catalog.machines(gpu="T4")
    assert {m.cloud for m in t4} == {"vertex", "sagemaker"}
    assert all(m.gpu and m.gpu.name == "T4" for m in t4)
    assert [m.machine_type for m in catalog.machines("vertex", "NVIDIA_TESLA_T4")] == [
        "n1-highmem-2",
        "n1-highmem-2",
        "n1-highmem-2",
    ]  # smallest N1 taking 1, 2 and 4 T4s
    assert catalog.machines(gpu="no-such-gpu") == []
    h100 = {m.machine_type for m in catalog.machines(gpu="h100")}
    assert {"a3-highgpu-8g", "ml.p5.48xlarge"} <= h100


def test_machines_every_combination_lists_all_n1_counts():
    every = catalog.machines("vertex", "V100", every_combination=True)
    combos = {(m.machine_type, m.accelerator_count) for m in every}
    assert ("n1-standard-16", 2) in combos and ("n1-standard-16", 1) not in combos
    assert ("n1-standard-96", 8) in combos
    assert len(every) > len(catalog.machines("vertex", "V100"))


def test_machines_are_sorted_by_cloud_gpu_count_price():
    rows = catalog.machines()
    assert rows[0].cloud == "vertex" and rows[-1].cloud == "sagemaker"
    vertex_gpus = [(m.gpu.name, m.accelerator_count) for m in rows if m.cloud == "vertex" and m.gpu]
    assert vertex_gpus == sorted(vertex_gpus)


def test_sagemaker_gpu_counts_match_sagemaker_core():
    """sagemaker-core's instance_gpu_info.json (read as a file) agrees on GPU count and memory."""
    spec = importlib.util.find_spec("sagemaker")
    assert spec is not None and spec.submodule_search_locations
    root = Path(spec.submodule_search_locations[0])
    sdk = json.loads((root / "core" / "image_uri_config" / "instance_gpu_info.json").read_text())["us-east-1"]
    checked = 0
    for name in table("sagemaker").types:
        if name not in sdk:
            continue
        checked += 1
        info = catalog.resolve_machine("sagemaker", name, None, 0)
        assert info.accelerator_count == sdk[name]["Count"], name
        if info.gpu:
            mib = sdk[name]["TotalGpuMemoryInMiB"]
            assert info.gpu_memory_gb * 1024 == pytest.approx(mib, rel=0.1), name
    assert checked >= 15


def test_gpu_models():
    models = gpus.models()
    assert models["T4"] == catalog.GpuModel("T4", 16.0, "7.5")
    assert models["H100"].compute_capability == "9.0"
    assert models["A100-80GB"].memory_gb == 80


def gpu_name(m: MachineInfo) -> str:
    assert m.gpu is not None, f"{m.machine_type} has no GPU"
    return m.gpu.name


def test_a_gpu_family_takes_in_its_sizes_and_json_names_gpus_one_way():
    a100 = {(m.cloud, gpu_name(m)) for m in catalog.machines(gpu="A100")}
    assert ("vertex", "A100-80GB") in a100 and ("sagemaker", "A100-80GB") in a100 and ("vertex", "A100") in a100
    assert {gpu_name(m) for m in catalog.machines(gpu="A100-80GB")} == {"A100-80GB"}
    every = {(m.machine_type, m.accelerator_count) for m in catalog.machines("vertex", "T4", every_combination=True)}
    n1 = [t for t, spec in table("vertex").types.items() if spec.attach]
    assert ("n1-standard-16", 4) in every and {t for t, _ in every} == set(n1)  # every N1 type that takes a T4
    records = [catalog.machine_record(m) for m in catalog.machines(gpu="T4")]
    assert {r["gpu"] for r in records} == {"T4"}
    assert {r["cloud_accelerator"] for r in records if r["cloud"] == "vertex"} == {"NVIDIA_TESLA_T4"}
    assert "T4" in catalog.gpu_names() and "A100-80GB" in catalog.gpu_names("vertex")
