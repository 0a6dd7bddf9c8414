"""TPU VMs as data, from ``data/vertex_tpus.json``: ``cloud-tpu`` with TPU_V2/TPU_V3 × 8 and the v5e ``ct5lp-hightpu-*``
types that take a ``tpuTopology``. Only single-host TPU VMs run; a pod slice is refused in one line. Kept apart from the
GPU tables, so no GPU mapping lands on one by accident."""

from __future__ import annotations

import functools
from typing import Any

from cloudtrain.catalog import availability, cloud_facts
from cloudtrain.catalog._data import load
from cloudtrain.catalog.records import CatalogError, MachineInfo, TpuInfo
from cloudtrain.catalog.suggest import nearest_versions, version_key

MULTI_HOST = "multi-host TPU slices (pods) are not supported yet; use a single-host type"


@functools.cache
def _data() -> dict[str, Any]:
    return load(cloud_facts.tpu_table())


def _title() -> str:
    """The TPU cloud as messages name it."""
    return cloud_facts.title(_data()["cloud"])


def is_tpu(machine_type: str) -> bool:
    return machine_type in _data()["types"]


def machine_types() -> tuple[str, ...]:
    return tuple(_data()["types"])


def _accelerators_of(machine_type: str) -> dict[str, dict[str, Any]]:
    t = _data()["types"][machine_type]
    if "accelerators" in t:
        accelerators: dict[str, dict[str, Any]] = t["accelerators"]
        return accelerators
    return {t["accelerator"]: {**t, "count": t["chips"]}}


def _info(machine_type: str, accelerator: str) -> MachineInfo:
    data = _data()
    row = _accelerators_of(machine_type)[accelerator]
    gen = data["accelerators"][accelerator]
    built_in = "chips" in row
    chips = row["chips"] if built_in else row["count"] // gen["cores_per_chip"]
    return MachineInfo(
        cloud=data["cloud"],
        machine_type=machine_type,
        vcpus=row["vcpus"],
        memory_gb=float(row["memory_gb"]),
        accelerator=accelerator,
        accelerator_count=row["count"],
        gpu=None,
        price_per_hour=row.get("price_per_hour"),
        price_region=data["price"]["region"],
        price_date=data["price"]["date"],
        tpu=TpuInfo(
            accelerator,
            gen["generation"],
            chips,
            chips * gen["cores_per_chip"],
            row.get("topology") if built_in else None,
        ),
    )


def _tpu(m: MachineInfo) -> TpuInfo:
    """A TPU machine's chips (its ``accelerator`` is ``tpu.accelerator``); only TPU machines come here."""
    if m.tpu is None:
        raise CatalogError(f"{m.machine_type} is not a TPU VM", field="machine_type")
    return m.tpu


def machines() -> list[MachineInfo]:
    """Every single-host TPU VM, cheapest first."""
    rows = [_info(m, a) for m in _data()["types"] for a in _accelerators_of(m)]
    return sorted(rows, key=lambda m: (m.price_per_hour or 0.0, m.machine_type))


def regions(accelerator: str) -> tuple[str, ...]:
    """Regions where Vertex AI offers this TPU for custom training."""
    return tuple(_data()["accelerators"][accelerator]["regions"])


def record(m: MachineInfo) -> dict[str, Any]:
    """One TPU VM as JSON (``machines --tpu -o json``): ``accelerator_count`` is what the request carries."""
    t = _tpu(m)
    return {
        "cloud": m.cloud,
        "machine_type": m.machine_type,
        "vcpus": m.vcpus,
        "memory_gb": m.memory_gb,
        "tpu": t.generation,
        "cloud_accelerator": t.accelerator,
        "accelerator_count": m.accelerator_count,
        "chips": t.chips,
        "cores": t.cores,
        "topology": t.topology,
        "regions": list(regions(t.accelerator)),
        "tensorflow_images": list(tensorflow_versions()),
        "price_per_hour": m.price_per_hour,
        "price_region": m.price_region,
        "price_date": m.price_date,
    }


def describe(m: MachineInfo) -> str:
    """``ct5lp-hightpu-4t (TPU v5e, 4 chips, 2x2)``, ``cloud-tpu with 8 × TPU_V3 (TPU v3, 4 chips, 8 cores)``."""
    t = _tpu(m)
    shape = f"TPU {t.generation}, {t.chips} chip{'s' * (t.chips > 1)}"
    shape += f", {t.topology}" if t.topology else f", {t.cores} cores"
    if t.topology:
        return f"{m.machine_type} ({shape})"
    return f"{m.machine_type} with {m.accelerator_count} × {m.accelerator} ({shape})"


def resolve(machine_type: str, accelerator: str | None, count: int | None) -> MachineInfo:
    """The TPU VM, or a CatalogError naming the valid forms: TPU and GPU never together."""
    takes = _accelerators_of(machine_type)
    built_in = "accelerators" not in _data()["types"][machine_type]
    given = accelerator.strip().upper().replace("-", "_") if accelerator and accelerator.strip() else None
    if given and given not in takes:
        what = "comes with" if built_in else "takes"
        raise CatalogError(
            f"{machine_type} is a TPU VM and {what} {' or '.join(takes)}, not {accelerator}; "
            "TPUs and GPUs never share a machine",
            [describe(_info(machine_type, a)) for a in takes] + _gpu_hint(given),
            field="accelerator",
        )
    if given is None and not built_in:
        raise CatalogError(
            f"{machine_type} needs an accelerator: {', '.join(takes)} with accelerator_count 8",
            [describe(_info(machine_type, a)) for a in takes],
            field="accelerator",
        )
    name = given or next(iter(takes))
    row = takes[name]
    if count and count != row["count"]:
        if count in row.get("multi_host_counts", ()):
            raise CatalogError(
                f"{count} × {name} is a pod slice over several TPU VMs: {MULTI_HOST} "
                f"(accelerator_count {row['count']})",
                [describe(_info(machine_type, name))],
                field="accelerator_count",
            )
        unit = "TensorCores" if not built_in else "chips"
        sized = [describe(_info(t, name)) for t in _same_family(name) if _data()["types"][t]["chips"] == count]
        raise CatalogError(
            f"{machine_type} with {name} has {row['count']} {unit}; received accelerator_count {count}",
            sized + [describe(_info(machine_type, name))],
            field="accelerator_count",
        )
    return _info(machine_type, name)


def _gpu_hint(given: str | None) -> list[str]:
    return ["a GPU machine such as a2-highgpu-1g"] if given and not given.startswith("TPU") else []


def check_topology(m: MachineInfo, topology: str | None) -> None:
    """``machine.tpu_topology`` must be the type's own (single-host) one; a larger one is a pod."""
    tpu = _tpu(m)
    if topology is None or topology == tpu.topology:
        return
    if tpu.topology is None:
        raise CatalogError(
            f"{m.machine_type} takes no tpu_topology (TPU {tpu.generation} VMs have a fixed shape); "
            f"received {topology}",
            [],
            field="tpu_topology",
        )
    family = [_info(t, tpu.accelerator) for t in _same_family(tpu.accelerator)]
    if topology in _data()["accelerators"][m.accelerator].get("multi_host_topologies", []):
        raise CatalogError(
            f"tpu_topology {topology} spans several TPU VMs: {MULTI_HOST}",
            [describe(f) for f in family],
            field="tpu_topology",
        )
    raise CatalogError(
        f"{m.machine_type} has topology {tpu.topology}, received tpu_topology {topology}",
        [f"tpu_topology: {tpu.topology}"] + [describe(f) for f in family if _tpu(f).topology == topology],
        field="tpu_topology",
    )


def _same_family(accelerator: str) -> list[str]:
    return [name for name, t in _data()["types"].items() if t.get("accelerator") == accelerator]


def check_region(m: MachineInfo, region: str) -> None:
    regions = _data()["accelerators"][m.accelerator]["regions"]
    if region in regions:
        return
    others = [name for name, g in _data()["accelerators"].items() if region in g["regions"]]
    also = f"; {region} has {', '.join(others)}" if others else ""
    ranked = availability.nearest(region, regions)  # nearest first
    raise CatalogError(
        f"{_title()} offers {m.accelerator} (TPU {_tpu(m).generation}) in {', '.join(ranked)}, not {region}{also}",
        ranked[:3],
        field="region",
    )


def tensorflow_versions() -> tuple[str, ...]:
    """TensorFlow versions with a prebuilt Vertex AI TPU training image, oldest first."""
    return tuple(sorted(_data()["tensorflow_images"]["versions"], key=version_key))


def default_tensorflow() -> str:
    return tensorflow_versions()[-1]


def check_tensorflow(tensorflow: str) -> None:
    """TPUs need TensorFlow >= 2.15 (v5e's minimum, and the oldest TPU image cloudtrain offers)."""
    low = _data()["min_tensorflow"]
    if version_key(tensorflow)[:2] < version_key(low):
        raise CatalogError(
            f"TPUs need TensorFlow {low} or newer on {_title()}; received {tensorflow}",
            list(reversed(tensorflow_versions())),
            field="tensorflow",
        )


def training_image(image_prefix: str, tensorflow: str) -> str:
    """The prebuilt TPU training image for ``tensorflow`` (major.minor), or a CatalogError naming those there are."""
    check_tensorflow(tensorflow)
    images = _data()["tensorflow_images"]
    row = images["versions"].get(".".join(tensorflow.strip().split(".")[:2]))
    if row is None:
        available = tensorflow_versions()
        raise CatalogError(
            f"{_title()} has no prebuilt TensorFlow {tensorflow} image for TPUs (TPU images: {', '.join(available)}); "
            "or set image.uri to your own image with tensorflow and libtpu",
            nearest_versions(tensorflow, available),
            field="tensorflow",
        )
    template: str = images["template"]
    return template.format(image_prefix=image_prefix, tag=row["tag"])


def check_job(
    m: MachineInfo,
    *,
    topology: str | None,
    region: str,
    replica_count: int,
    tensorflow: str | None,
    own_image: bool,
    image_prefix: str,
) -> None:
    """One TPU job on Vertex AI: the type's topology, a region that has it, one host, TensorFlow >= 2.15 with a prebuilt
    TPU image unless ``own_image``. CatalogError with ``field`` tpu_topology, region, replica_count or tensorflow."""
    check_topology(m, topology)
    check_region(m, region)
    if replica_count > 1:
        raise CatalogError(
            f"replica_count {replica_count} asks for several TPU VMs: {MULTI_HOST}",
            [f"replica_count: 1 (one {describe(m)})"],
            field="replica_count",
        )
    if own_image:
        if tensorflow is not None:
            check_tensorflow(tensorflow)
    else:
        training_image(image_prefix, tensorflow or default_tensorflow())
