"""One cloud's machine table, read from its JSON: built-in GPUs (a series names its accelerator, each type its count)
and attachable ones (Vertex N1: per GPU count, the most vCPUs and memory a machine may have)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from cloudtrain.catalog import cloud_facts, gpus
from cloudtrain.catalog._data import load
from cloudtrain.catalog.records import MachineInfo


@dataclass(frozen=True)
class MachineType:
    name: str
    series: str  # "n1-standard", "a2-highgpu", "ml.g5"
    vcpus: int
    memory_gb: float
    price_per_hour: float | None  # built-in GPUs included; attachable ones not
    accelerator: str | None = None  # built-in accelerator
    accelerator_count: int = 0  # built-in count
    attach: str | None = None  # rule set for attachable accelerators


@dataclass(frozen=True)
class AttachRule:
    count: int
    max_vcpus: int
    max_memory_gb: float


class CloudTable:
    def __init__(self, data: dict[str, Any], *, title: str):
        self.cloud: str = data["cloud"]
        self.title = title  # the cloud as messages name it
        self.price_region: str = data["price"]["region"]
        self.price_date: str = data["price"]["date"]
        self.regions: dict[str, dict[str, Any]] = data["regions"]
        self.accelerators: dict[str, dict[str, Any]] = data["accelerators"]
        self.rules: dict[str, dict[str, tuple[AttachRule, ...]]] = {
            rule_set: {acc: tuple(AttachRule(**row) for row in rows) for acc, rows in by_acc.items()}
            for rule_set, by_acc in data.get("attachable", {}).items()
        }
        self.types: dict[str, MachineType] = {}
        for series, spec in data["series"].items():
            for name, t in spec["types"].items():
                self.types[name] = MachineType(
                    name=name,
                    series=series,
                    vcpus=t["vcpus"],
                    memory_gb=float(t["memory_gb"]),
                    price_per_hour=t.get("price_per_hour"),
                    accelerator=spec.get("accelerator") if t.get("accelerator_count", 0) else None,
                    accelerator_count=t.get("accelerator_count", 0),
                    attach=spec.get("attach"),
                )
        self.tensorflow_images: dict[str, Any] = data["tensorflow_images"]
        self.refused: dict[str, str] = data.get("_without_gpu_facts", {})  # type the cloud takes → why not here

    def attachable(self, t: MachineType) -> dict[str, tuple[AttachRule, ...]]:
        """Accelerators that can be attached to ``t``, with their rules; empty for built-in GPUs."""
        return self.rules.get(t.attach, {}) if t.attach else {}

    def allowed_counts(self, t: MachineType, accelerator: str) -> tuple[int, ...]:
        if t.accelerator:
            return (t.accelerator_count,) if accelerator == t.accelerator else ()
        rules = self.attachable(t).get(accelerator, ())
        return tuple(r.count for r in rules if t.vcpus <= r.max_vcpus and t.memory_gb <= r.max_memory_gb)

    def accelerators_named(self, given: str) -> list[str]:
        """This cloud's accelerator names that ``given`` can mean, exact spelling first."""
        exact = given.strip().upper().replace("-", "_")
        found = [a for a in self.accelerators if a.upper() == exact]
        found += [a for a, spec in self.accelerators.items() if a not in found and gpus.known_as(spec["gpu"], given)]
        return found

    def info(self, t: MachineType, accelerator: str | None, count: int) -> MachineInfo:
        price = t.price_per_hour
        if accelerator and t.attach and price is not None:
            each = self.accelerators[accelerator].get("price_per_hour")
            price = None if each is None else round(price + count * each, 4)
        return MachineInfo(
            cloud=self.cloud,
            machine_type=t.name,
            vcpus=t.vcpus,
            memory_gb=t.memory_gb,
            accelerator=accelerator if count else None,
            accelerator_count=count if accelerator else 0,
            gpu=gpus.models()[self.accelerators[accelerator]["gpu"]] if accelerator and count else None,
            price_per_hour=price,
            price_region=self.price_region,
            price_date=self.price_date,
        )

    @functools.cached_property
    def combos(self) -> tuple[MachineInfo, ...]:
        """Every valid (machine type, accelerator, count), CPU-only ones included."""
        rows: list[MachineInfo] = []
        for t in self.types.values():
            if t.accelerator:
                rows.append(self.info(t, t.accelerator, t.accelerator_count))
                continue
            rows.append(self.info(t, None, 0))
            for acc in self.attachable(t):
                rows.extend(self.info(t, acc, n) for n in self.allowed_counts(t, acc))
        return tuple(rows)

    def describe(self, m: MachineInfo) -> str:
        """``n1-standard-16 with 4 × NVIDIA_TESLA_T4``, ``a2-highgpu-4g (4 × NVIDIA_TESLA_A100)``."""
        if not m.accelerator:
            return m.machine_type
        if self.types[m.machine_type].accelerator:
            return f"{m.machine_type} ({m.accelerator_count} × {m.accelerator})"
        return f"{m.machine_type} with {m.accelerator_count} × {m.accelerator}"


@functools.cache
def table(cloud: str) -> CloudTable:
    return CloudTable(load(cloud_facts.table_name(cloud)), title=cloud_facts.title(cloud))
