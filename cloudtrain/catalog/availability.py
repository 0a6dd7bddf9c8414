"""Which regions offer a machine's accelerators, and which are nearest, from ``data/accelerator_regions.json``: rows
keyed by machine series, else accelerator; a machine with no row is not checked offline. Distances are great-circle."""

from __future__ import annotations

import functools
import math
from typing import Any

from cloudtrain.catalog._data import load
from cloudtrain.catalog.records import CatalogError, MachineInfo
from cloudtrain.catalog.table import table

_EARTH_KM = 6371.0


def _data() -> dict[str, Any]:
    return load("accelerator_regions")


def source(cloud: str) -> dict[str, str]:
    """``{"source": url, "checked": date, "note": what the rows rest on}`` of ``cloud``'s rows."""
    rows = _data().get(cloud) or {}
    return {k: str(rows[k]) for k in ("source", "checked", "note") if k in rows}


def sources(cloud: str) -> list[dict[str, str]]:
    """Each page ``cloud``'s rows rest on: ``{"id", "url", "checked", "shows"}``."""
    return [{k: str(v) for k, v in s.items()} for s in (_data().get(cloud) or {}).get("sources") or []]


def _offered(cloud: str) -> dict[str, dict[str, Any]]:
    return (_data().get(cloud) or {}).get("offered") or {}


def unverified(cloud: str, key: str) -> tuple[str, ...]:
    """The regions ``key``'s row lists although no page of the training service could confirm them."""
    return tuple((_offered(cloud).get(key) or {}).get("unverified") or ())


@functools.cache
def _place(region: str) -> tuple[float, float] | None:
    found = _data()["places"].get(region)
    return (float(found[1]), float(found[2])) if found else None


def distance_km(a: str, b: str) -> float:
    """Great-circle distance between two regions' cities; infinite when one is not placed."""
    pa, pb = _place(a), _place(b)
    if pa is None or pb is None:
        return math.inf
    (lat1, lon1), (lat2, lon2) = (tuple(map(math.radians, p)) for p in (pa, pb))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * _EARTH_KM * math.asin(min(1.0, math.sqrt(h)))


def nearest(region: str, candidates: tuple[str, ...] | list[str]) -> list[str]:
    """``candidates`` ordered by distance from ``region`` (ties: in the data's order)."""
    order = {r: i for i, r in enumerate(candidates)}
    return sorted(candidates, key=lambda r: (distance_km(region, r), order[r]))


def _key(m: MachineInfo) -> str | None:
    """The ``offered`` row that decides ``m``: its series, else its accelerator; None when neither has one."""
    offered = _offered(m.cloud)
    t = table(m.cloud).types.get(m.machine_type)
    for key in (t.series if t else None, m.accelerator):
        if key and key in offered:
            return key
    return None


def regions_offering(m: MachineInfo) -> tuple[str, ...] | None:
    """The regions that offer ``m``'s accelerators; None when the data has no row for them (not checked).
    A machine without accelerators, or a TPU VM (data/vertex_tpus.json), is None here."""
    if not m.accelerator_count or m.tpu is not None:
        return None
    key = _key(m)
    return None if key is None else tuple(_offered(m.cloud)[key]["regions"])


def unchecked(cloud: str) -> tuple[str, ...]:
    """The regions of ``cloud`` no source covers: no row refuses them (data ``unchecked``)."""
    return tuple((_data().get(cloud) or {}).get("unchecked") or ())


def _told(m: MachineInfo, region: str) -> bool:
    """Whether the data can tell if ``region`` offers ``m``'s accelerators."""
    return regions_offering(m) is not None and region not in unchecked(m.cloud)


def offers(m: MachineInfo, region: str) -> bool:
    """Whether ``region`` offers ``m``'s accelerators (True when the data cannot tell)."""
    return not _told(m, region) or region in (regions_offering(m) or ())


def _partition(cloud: str, region: str) -> str:
    """The account partition ``region`` belongs to (data ``partitions``; "" for the cloud's main one)."""
    partitions = (_data().get(cloud) or {}).get("partitions") or {}
    return next((name for name, regions in partitions.items() if region in regions), "")


def _suggestions(m: MachineInfo, region: str, regions: tuple[str, ...]) -> list[str]:
    """``regions`` nearest first, only those in ``region``'s partition (another needs another account), unless none."""
    mine = [r for r in regions if _partition(m.cloud, r) == _partition(m.cloud, region)]
    return nearest(region, mine or list(regions))


def nearest_offering(m: MachineInfo, region: str) -> str | None:
    """``region`` when it offers ``m``'s accelerators (or the data cannot tell), else the nearest that does, or None."""
    regions = regions_offering(m)
    if regions is None or offers(m, region):
        return region
    ranked = _suggestions(m, region, regions)
    return ranked[0] if ranked else None


def check_offered(m: MachineInfo, region: str) -> None:
    """CatalogError (field ``region``) when ``region`` does not offer ``m``'s accelerators, naming the
    nearest regions that do (``data/accelerator_regions.json``; TPU VMs: ``catalog.check_tpu_job``)."""
    regions = regions_offering(m)
    if regions is None or offers(m, region):
        return
    ranked = _suggestions(m, region, regions)
    raise CatalogError(
        f"{table(m.cloud).title} offers no {_what(m)} in {region}; nearest regions with it: {', '.join(ranked[:3])}",
        ranked[:3],
        field="region",
    )


def offered_in(cloud: str, region: str) -> list[str]:
    """The accelerators (or machine series) the catalog lists for ``region``, in the data's order."""
    return [key for key, row in _offered(cloud).items() if region in row["regions"]]


def _what(m: MachineInfo) -> str:
    gpu = m.gpu.name if m.gpu else None
    t = table(m.cloud).types.get(m.machine_type)
    if t is not None and t.accelerator:  # built-in GPUs: the machine type is what the region lacks
        return f"{m.machine_type} ({gpu or m.accelerator})"
    return str(m.accelerator) if gpu is None or gpu == m.accelerator else f"{m.accelerator} ({gpu})"
