"""Which clouds the catalog holds and how they differ, from ``data/clouds.json``: each fact that sets one apart is read
here, so the catalog's code names no cloud and a cloud is added as data."""

from __future__ import annotations

from typing import Any

from cloudtrain.catalog._data import load


def _facts(cloud: str) -> dict[str, Any]:
    facts: dict[str, Any] = load("clouds")["clouds"][cloud]
    return facts


def names() -> tuple[str, ...]:
    """The clouds, in the order the machine listing shows them."""
    return tuple(load("clouds")["clouds"])


def title(cloud: str) -> str:
    """The cloud as messages name it (``Vertex AI``)."""
    return str(_facts(cloud)["title"])


def table_name(cloud: str) -> str:
    """The data file (``data/<name>.json``) with the cloud's regions, machines, prices and images."""
    return str(_facts(cloud)["table"])


def own_accelerator_names(cloud: str) -> bool:
    """Whether the cloud names its accelerators itself (``NVIDIA_TESLA_T4``) rather than by GPU model."""
    return bool(_facts(cloud)["own_accelerator_names"])


def tpu_cloud() -> str:
    """The cloud that runs TPU VMs: the one whose entry names a ``tpus`` table."""
    return next(name for name in names() if "tpus" in _facts(name))


def tpu_table() -> str:
    """The data file (``data/<name>.json``) with the TPU VMs."""
    return str(_facts(tpu_cloud())["tpus"])


def nearest_regions_table(cloud: str) -> str:
    """The table of ``data/crosscloud.json`` that takes the other cloud's regions to ``cloud``'s nearest."""
    return str(_facts(cloud)["nearest_regions"])
