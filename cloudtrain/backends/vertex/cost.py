"""What a finished Vertex AI job cost: its ``start_time`` → ``end_time`` (its only record of time)
× every pool's machines × their list price.

Vertex bills spot VMs at a discount the catalog does not carry: the figure says so instead of guessing."""

from __future__ import annotations

import datetime as dt

from cloudtrain import catalog
from cloudtrain.catalog.cost import Cost, priced
from cloudtrain.job_states import JobStatus

SPOT_BASIS = "on-demand list price; spot VMs bill less, at spot rates the catalog does not carry"


def cost_after(status: JobStatus) -> Cost | None:
    details = status.details or {}
    if not details.get("pools") or not details.get("start_time"):
        return None
    start = dt.datetime.fromisoformat(details["start_time"])
    end = dt.datetime.fromisoformat(details["end_time"]) if details.get("end_time") else status.ended
    if end is None:
        return None
    seconds = max(0.0, (end - start).total_seconds())
    total, parts, info = 0.0, [], None
    for pool in details["pools"]:
        try:
            info = catalog.resolve_machine(
                "vertex", pool["machine_type"], pool.get("accelerator_type"), pool.get("accelerator_count") or None
            )
        except catalog.CatalogError:
            return None
        if info.price_per_hour is None:
            return None
        replicas = int(pool.get("replica_count") or 1)
        total += info.price_per_hour * replicas * seconds / 3600
        parts.append(f"{replicas} × {info.machine_type} ${info.price_per_hour}/h")
    if info is None:  # no pools: returned above
        return None
    basis = f"start_time → end_time {seconds:.0f} s × ({' + '.join(parts)})"
    out = priced(round(total, 4), basis, info, details.get("region"))
    if details.get("scheduling_strategy") == "SPOT":
        out["note"] = (
            "on-demand list price: the catalog has no Vertex AI spot prices, so the spot discount is not shown"
        )
    return out
