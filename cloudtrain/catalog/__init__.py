"""The clouds' catalogs as data (regions, machine types, accelerators, prices, TensorFlow images) from ``data/*.json``,
loaded on first use; no cloud SDK, no TensorFlow. The code names no cloud: ``data/clouds.json`` lists them. To update,
edit the table (each names its sources) and run ``pytest tests/catalog``."""

from __future__ import annotations

from typing import Any, Protocol

from cloudtrain.catalog import cloud_facts as _facts
from cloudtrain.catalog import gpus as _gpus
from cloudtrain.catalog import images_sdk_table, images_template
from cloudtrain.catalog import tpus as _tpus
from cloudtrain.catalog.availability import check_offered as check_offered
from cloudtrain.catalog.availability import nearest_offering as nearest_offering
from cloudtrain.catalog.availability import offered_in as offered_in
from cloudtrain.catalog.records import CatalogError as CatalogError
from cloudtrain.catalog.records import GpuModel as GpuModel
from cloudtrain.catalog.records import MachineInfo as MachineInfo
from cloudtrain.catalog.records import TpuInfo as TpuInfo
from cloudtrain.catalog.resolve import resolve as _resolve
from cloudtrain.catalog.suggest import did_you_mean
from cloudtrain.catalog.table import CloudTable
from cloudtrain.catalog.table import table as _table


#: The modules that build image URIs, by the ``uri_rules`` a table's ``tensorflow_images`` names.
class _ImageRules(Protocol):
    """What a module that builds a cloud's image URIs provides (``images_template``, ``images_sdk_table``)."""

    def tensorflow_versions(self, table: CloudTable) -> tuple[str, ...]: ...

    def training_image(
        self, table: CloudTable, region: str, tensorflow: str, gpu: bool, py_version: str | None
    ) -> str: ...

    def python_tags(self, table: CloudTable, tensorflow: str) -> tuple[str, ...]: ...


_IMAGE_RULES: dict[str, _ImageRules] = {"template": images_template, "sdk_table": images_sdk_table}


def clouds() -> tuple[str, ...]:
    """The clouds with a catalog, in the order ``data/clouds.json`` gives them (and the listing shows)."""
    return _facts.names()


def title(cloud: str) -> str:
    """The cloud as messages name it: ``Vertex AI``, ``SageMaker``."""
    return _facts.title(_known(cloud))


def tpu_cloud() -> str:
    """The cloud that runs TPU VMs; the others have none."""
    return _facts.tpu_cloud()


def _known(cloud: str) -> str:
    known = clouds()
    if cloud not in known:
        raise CatalogError(
            f"unknown cloud {cloud!r}; allowed: {', '.join(known)}", did_you_mean(cloud, known), field="cloud"
        )
    return cloud


def _cloud(cloud: str) -> CloudTable:
    return _table(_known(cloud))


def regions(cloud: str) -> tuple[str, ...]:
    """Regions where the cloud runs training jobs."""
    return tuple(_cloud(cloud).regions)


def check_region(cloud: str, region: str) -> None:
    table = _cloud(cloud)
    if region in table.regions:
        return
    message = f"{cloud} has no region {region!r}"
    for other in clouds():
        if other != cloud and region in _table(other).regions:
            message += f" ({region} is a {other} region)"
    raise CatalogError(
        f"{message}; it trains in {len(table.regions)} regions, e.g. {', '.join(list(table.regions)[:3])}",
        did_you_mean(region, table.regions),
        field="region",
    )


def built_in_gpus(cloud: str, machine_type: str) -> bool:
    """Whether ``machine_type``'s GPUs come with it (``a2-highgpu-1g``, every SageMaker type) rather than
    being attached to it (Vertex N1); False for a cloud or type the catalog does not hold."""
    if cloud not in clouds():
        return False
    t = _cloud(cloud).types.get(machine_type)
    return bool(t and t.accelerator)


def resolve_machine(
    cloud: str, machine_type: str, accelerator: str | None, accelerator_count: int | None
) -> MachineInfo:
    """The machine with its accelerators, or a CatalogError naming the nearest valid ones. Built-in GPUs may be omitted
    (must match when given); any common GPU spelling; TPUs from :mod:`.tpus`."""
    if _tpus.is_tpu(machine_type):
        if cloud == tpu_cloud():
            return _tpus.resolve(machine_type, accelerator, accelerator_count)
        if cloud in clouds():
            raise CatalogError(_no_tpus(cloud, machine_type), field="machine_type")
    return _resolve(_cloud(cloud), machine_type, accelerator, accelerator_count)


def _no_tpus(cloud: str, machine_type: str) -> str:
    """A TPU machine type on a cloud without TPUs: where it runs instead, and how to keep both."""
    tpu, name = tpu_cloud(), title(cloud)
    return (
        f"{machine_type} is a {title(tpu)} TPU VM and {name} has no TPUs; give {name} a GPU machine "
        f"(cloudtrain machines --backend {cloud}) and keep the TPU on backend: {tpu}, one of them as a "
        "fallback: entry (docs/how-to/tpu.md)"
    )


def check_tpu_job(
    m: MachineInfo, *, topology: str | None, region: str, replica_count: int, tensorflow: str | None, own_image: bool
) -> None:
    """A TPU job beyond its machine: topology, region, one host, TensorFlow, image (``tpus.check_job``)."""
    cloud = tpu_cloud()
    check_region(cloud, region)
    _tpus.check_job(
        m,
        topology=topology,
        region=region,
        replica_count=replica_count,
        tensorflow=tensorflow,
        own_image=own_image,
        image_prefix=_table(cloud).regions[region]["image_prefix"],
    )


def tpu_machine_types() -> tuple[str, ...]:
    """Vertex AI's TPU VM machine types (``cloud-tpu``, ``ct5lp-hightpu-4t``, …)."""
    return _tpus.machine_types()


def machines(cloud: str | None = None, gpu: str | None = None, *, every_combination: bool = False) -> list[MachineInfo]:
    """Valid machines for ``cloudtrain machines``: attachable GPUs × count once, on the smallest machine taking them,
    unless ``every_combination``; ``gpu`` takes in its family, unknown gives ``[]``."""
    rows: list[MachineInfo] = []
    for name in (cloud,) if cloud else clouds():
        table = _cloud(name)
        smallest: dict[tuple[str | None, int], MachineInfo] = {}
        for m in table.combos:
            if gpu and not (m.gpu and _gpus.in_family(m.gpu.name, gpu)):
                continue
            attached = m.accelerator and not table.types[m.machine_type].accelerator
            if every_combination or not attached:
                rows.append(m)
                continue
            key = (m.accelerator, m.accelerator_count)
            best = smallest.get(key)
            if best is None or (m.vcpus, m.memory_gb) < (best.vcpus, best.memory_gb):
                smallest[key] = m
        rows.extend(smallest.values())
    order = {c: i for i, c in enumerate(clouds())}
    return sorted(
        rows,
        key=lambda m: (
            order[m.cloud],
            m.gpu.name if m.gpu else "",
            m.accelerator_count,
            m.price_per_hour or 0.0,
            m.machine_type,
        ),
    )


def gpu_names(cloud: str | None = None) -> list[str]:
    """The GPU models some machine of ``cloud`` (or of either cloud) has, by name."""
    return sorted({m.gpu.name for c in ((cloud,) if cloud else clouds()) for m in _cloud(c).combos if m.gpu})


def machine_record(m: MachineInfo) -> dict[str, Any]:
    """One machine as JSON, the same naming on both clouds: ``gpu`` is the model ("T4", "A100-80GB");
    ``cloud_accelerator`` keeps the cloud's own name where it has one (Vertex's ``NVIDIA_TESLA_T4``)."""
    return {
        "cloud": m.cloud,
        "machine_type": m.machine_type,
        "vcpus": m.vcpus,
        "memory_gb": m.memory_gb,
        "gpu": m.gpu.name if m.gpu else None,
        "gpu_count": m.accelerator_count,
        "gpu_memory_gb": m.gpu.memory_gb if m.gpu else None,
        "gpu_compute_capability": m.gpu.compute_capability if m.gpu else None,
        "cloud_accelerator": m.accelerator if _facts.own_accelerator_names(m.cloud) else None,
        "price_per_hour": m.price_per_hour,
        "price_region": m.price_region,
        "price_date": m.price_date,
    }


def tensorflow_versions(cloud: str) -> tuple[str, ...]:
    """TensorFlow versions with a prebuilt training image, oldest first."""
    table = _cloud(cloud)
    return _image_rules(table).tensorflow_versions(table)


def default_tensorflow(cloud: str, *, tpu: bool = False) -> str:
    """The newest TensorFlow version with a prebuilt training image (for TPUs: with a TPU image)."""
    return _tpus.default_tensorflow() if tpu else tensorflow_versions(cloud)[-1]


def training_image(
    cloud: str, region: str, tensorflow: str, gpu: bool, *, py_version: str | None = None, tpu: bool = False
) -> str:
    """The prebuilt TensorFlow training image URI; CatalogError naming the available versions if none."""
    table = _cloud(cloud)
    check_region(cloud, region)
    if tpu:
        return _tpus.training_image(table.regions[region]["image_prefix"], str(tensorflow))
    return _image_rules(table).training_image(table, region, str(tensorflow), gpu, py_version)


def image_pythons(cloud: str, tensorflow: str) -> tuple[str, ...]:
    """Python versions (``"3.10"``) of the prebuilt TensorFlow image; empty if there is none."""
    table = _cloud(cloud)
    tags = _image_rules(table).python_tags(table, str(tensorflow))
    return tuple(f"{t[2]}.{t[3:]}" if len(t) > 3 else f"{t[2]}" for t in tags)


def python_tag(version: str | None) -> str | None:
    """``"3.10"`` or ``"py310"`` → ``"py310"`` (the images' own spelling); ``"3"`` or ``"py3"`` → ``"py3"``
    (Python 3, any minor: the SageMaker SDK's ``py_version="py3"``); None stays None."""
    return f"py{version.strip().removeprefix('py').replace('.', '')}" if version else None


def _image_rules(table: CloudTable) -> _ImageRules:
    """The module that builds ``table``'s image URIs, as its ``tensorflow_images.uri_rules`` says."""
    return _IMAGE_RULES[table.tensorflow_images["uri_rules"]]
