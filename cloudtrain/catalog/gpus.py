"""GPU models and the many ways people spell them ("T4", "NVIDIA_TESLA_T4", "nvidia-tesla-t4")."""

from __future__ import annotations

import functools
import re

from cloudtrain.catalog._data import load
from cloudtrain.catalog.records import GpuModel

_NOT_ALNUM = re.compile(r"[^A-Z0-9]")


def spelling_key(name: str) -> str:
    """One key for every spelling of a GPU name: upper case, no separators, no NVIDIA/TESLA."""
    key = _NOT_ALNUM.sub("", name.upper())
    for prefix in ("NVIDIA", "TESLA"):
        key = key.removeprefix(prefix)
    return key


@functools.cache
def models() -> dict[str, GpuModel]:
    return {
        name: GpuModel(name, float(m["memory_gb"]), m["compute_capability"])
        for name, m in load("gpus")["models"].items()
    }


@functools.cache
def _keys() -> dict[str, frozenset[str]]:
    return {
        name: frozenset(spelling_key(n) for n in (name, *m["aliases"])) for name, m in load("gpus")["models"].items()
    }


def known_as(model: str, given: str) -> bool:
    """Whether ``given`` is a name of GPU model ``model``."""
    return spelling_key(given) in _keys()[model]


def in_family(model: str, given: str) -> bool:
    """``given`` names ``model`` or its family: "A100" takes in "A100-80GB", "V100" the 32 GB one."""
    return known_as(model, given) or spelling_key(given) == spelling_key(model.split("-")[0])
