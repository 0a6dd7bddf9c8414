"""The nearest thing a cloud offers (a GPU at least as fast, a machine by GPU model and count, a region, a TensorFlow
version): pure lookups in ``data/gpus.json``, ``data/crosscloud.json`` and ``data/clouds.json``."""

from __future__ import annotations

import functools
import math

from cloudtrain.catalog import cloud_facts, gpus
from cloudtrain.catalog._data import load
from cloudtrain.catalog.records import CatalogError, MachineInfo
from cloudtrain.catalog.suggest import nearest_versions, version_key
from cloudtrain.catalog.table import table


@functools.cache
def _speeds() -> dict[str, float]:
    data = load("gpus")
    speeds = {name: float(m["training_tflops"]) for name, m in data["models"].items()}
    speeds.update({name: float(m["training_tflops"]) for name, m in data["retired"].items() if name[0] != "_"})
    return speeds


def gpu_model(name: str) -> str | None:
    """The GPU model any spelling names ("nvidia-tesla-k80" → "K80"), retired ones included."""
    data = load("gpus")
    key = gpus.spelling_key(name)
    for group in ("models", "retired"):
        for model, spec in data[group].items():
            if model[0] != "_" and key in {gpus.spelling_key(n) for n in (model, *spec["aliases"])}:
                found: str = model
                return found
    return None


def is_retired(model: str) -> bool:
    return model in load("gpus")["retired"]


@functools.cache
def price_per_gpu(cloud: str) -> dict[str, float]:
    """GPU model → the lowest hourly price per GPU of any machine carrying it on ``cloud``."""
    best: dict[str, float] = {}
    for m in table(cloud).combos:
        if m.gpu and m.accelerator_count:
            each = (m.price_per_hour or math.inf) / m.accelerator_count
            best[m.gpu.name] = min(best.get(m.gpu.name, math.inf), each)
    return best


def replacement_gpu(cloud: str, model: str) -> str:
    """``model`` if ``cloud`` offers it, else the cheapest GPU it offers that is at least as fast."""
    offered = price_per_gpu(cloud)
    if model in offered:
        return model
    speed = _speeds().get(model, 0.0)
    fast_enough = [g for g in offered if _speeds().get(g, 0.0) >= speed]
    if not fast_enough:
        return max(offered, key=lambda g: _speeds().get(g, 0.0))
    return min(fast_enough, key=lambda g: (offered[g], -_speeds().get(g, 0.0), g))


def nearest_machine(cloud: str, model: str | None, count: int, vcpus: int, memory_gb: float) -> MachineInfo:
    """The cheapest machine on ``cloud`` with ``count`` (nearest offered, larger on a tie) × ``model``'s replacement and
    at least ``vcpus`` and ``memory_gb``, else the roomiest; ``model`` None: CPU."""
    combos = table(cloud).combos
    if model is None or count == 0:
        rows = [m for m in combos if not m.accelerator_count]
    else:
        gpu = replacement_gpu(cloud, model)
        counts = sorted({m.accelerator_count for m in combos if m.gpu and m.gpu.name == gpu})
        n = count if count in counts else min(counts, key=lambda c: (abs(c - count), -c))
        rows = [m for m in combos if m.gpu and m.gpu.name == gpu and m.accelerator_count == n]
    fits = [m for m in rows if m.vcpus >= vcpus and m.memory_gb >= memory_gb]
    if fits:
        return min(fits, key=lambda m: (m.price_per_hour or math.inf, m.vcpus, m.machine_type))
    if not rows:
        raise CatalogError(f"{cloud} has no machine to stand in for {count} × {model}", field="machine_type")
    return max(rows, key=lambda m: (m.vcpus, m.memory_gb, -(m.price_per_hour or math.inf)))


def describe(m: MachineInfo) -> str:
    """``n1-standard-16 with 4 × NVIDIA_TESLA_T4``, ``ml.g4dn.12xlarge (4 × T4)``."""
    return table(m.cloud).describe(m)


def nearest_region(cloud: str, region: str) -> str | None:
    """The ``cloud`` region nearest to the other cloud's ``region``; None if the table lacks it."""
    nearest: str | None = load("crosscloud")[cloud_facts.nearest_regions_table(cloud)].get(region)
    return nearest


def mapped_tensorflow(version: str, offered: tuple[str, ...], title: str) -> tuple[str, str | None]:
    """The image version a cloud runs for ``version`` and, when another, why: the one rule every path follows
    (``image.tensorflow``, ``--runtime-version``, ``--set backend=``, a fallback)."""
    exact = ".".join(str(version).strip().split(".")[:2])
    chosen = nearest_tensorflow(exact, offered)
    if chosen == exact:
        return chosen, None
    why = f"{title} has no TensorFlow {exact} image; the nearest it offers, the newer on a tie"
    if exact.startswith("1."):
        why = f"TensorFlow 1 has no prebuilt {title} image any more; the newest TF 2 one; "
        why += "TF 1 code needs tf.compat.v1 or a port"
    return chosen, why


def python_version(value: str | None) -> str | None:
    """An image's Python as ``"3.10"`` from any spelling (``py310``); None for plain Python 3 or none."""
    digits = str(value or "").strip().removeprefix("py").replace(".", "")
    return f"{digits[0]}.{digits[1:]}" if len(digits) > 1 and digits.isdigit() else None


def nearest_tensorflow(version: str, offered: tuple[str, ...]) -> str:
    """The offered version nearest ``version`` by major.minor, the newer on a tie; else the newest."""
    exact = ".".join(version.split(".")[:2])
    if exact in offered:
        return exact
    ordered = sorted(offered, key=version_key)
    major = version_key(exact)[:1]
    if not any(version_key(v)[:1] == major for v in ordered):
        return ordered[-1]
    return nearest_versions(version, ordered, n=1)[0]
