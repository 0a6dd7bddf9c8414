"""What a finished job cost, from the cloud's own record × the catalog's list price.

* SageMaker: ``BillableTimeInSeconds`` (what AWS bills: for managed spot, the time with machines,
  less the savings) against ``TrainingTimeInSeconds``, per instance × the instance count, × the
  instance type's price.
* Vertex AI: the job's ``start_time`` → ``end_time`` (its only record of time) × every pool's
  machines × their price. Vertex bills spot VMs at a discount the catalog does not carry: the
  figure says so instead of guessing.

Every figure names the price's region and date: the catalog prices one reference region per
cloud (us-central1, us-east-1), which is said in each line when the job ran elsewhere.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from cloudtrain import catalog

#: What "cost/hour" is for a spot job, per cloud: the catalog holds on-demand list prices only. Vertex AI
#: spot VMs bill Compute Engine's spot rates, which change up to once a day and are not in the catalog;
#: SageMaker managed spot bills BillableTimeInSeconds at the on-demand rate (the saving shows after the job).
SPOT_BASIS = {
    "vertex": "on-demand list price; spot VMs bill less, at spot rates the catalog does not carry",
    "sagemaker": "on-demand list price; managed spot bills only BillableTimeInSeconds of it, known after the job",
}


def price_basis(spec: Any) -> str:
    """What a job's catalog $/hour stands for: ``on-demand list price``, and for a spot job what it bills instead."""
    if getattr(spec, "spot", False):
        return SPOT_BASIS.get(spec.backend, "on-demand list price; spot bills less")
    return "on-demand list price"


def cost_after(status: Any) -> dict[str, Any] | None:
    """``{"usd", "basis", "price_region", "price_date", …}`` for a job with a billing record, else None."""
    details = status.details or {}
    if details.get("billable_seconds") is not None and details.get("instance_type"):
        return _sagemaker(details)
    if details.get("pools") and details.get("start_time"):
        return _vertex(status, details)
    return None


def _sagemaker(details: dict[str, Any]) -> dict[str, Any] | None:
    try:
        info = catalog.resolve_machine("sagemaker", details["instance_type"], None, None)
    except catalog.CatalogError:
        return None
    if info.price_per_hour is None:
        return None
    billable = details["billable_seconds"]
    out: dict[str, Any] = {
        "usd": round(info.price_per_hour * billable / 3600, 4),
        "basis": f"BillableTimeInSeconds {billable} s (all instances) × {info.machine_type} ${info.price_per_hour}/h",
        **_where(info, details.get("region")),
    }
    training = details.get("training_seconds")
    if training and training > billable:
        on_demand = info.price_per_hour * training / 3600
        out["on_demand_usd"] = round(on_demand, 4)
        out["spot_savings_usd"] = round(on_demand - out["usd"], 4)
    return out


def _vertex(status: Any, details: dict[str, Any]) -> dict[str, Any] | None:
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
    out = {
        "usd": round(total, 4),
        "basis": f"start_time → end_time {seconds:.0f} s × ({' + '.join(parts)})",
        **_where(info, details.get("region")),
    }
    if details.get("scheduling_strategy") == "SPOT":
        out["note"] = (
            "on-demand list price: the catalog has no Vertex AI spot prices, so the spot discount is not shown"
        )
    return out


def _where(info: Any, region: str | None) -> dict[str, Any]:
    out = {"price_region": info.price_region, "price_date": info.price_date}
    if region and region != info.price_region:
        out["price_note"] = f"price of {info.price_region}; the job ran in {region}"
    return out
