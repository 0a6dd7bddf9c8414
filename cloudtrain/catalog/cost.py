"""What a finished job cost, from the cloud's own record × the catalog's list price.

Each backend reads its own record (``BackendFacts.cost_after``: SageMaker's billable seconds,
Vertex AI's start and end times × its pools). Every figure names the price's region and date: the
catalog prices one reference region per cloud (us-central1, us-east-1), which is said in each line
when the job ran elsewhere.
"""

from __future__ import annotations

from typing import Any

from cloudtrain import backends


def price_basis(spec: Any) -> str:
    """What a job's catalog $/hour stands for: ``on-demand list price``, and for a spot job what it bills
    instead (the backend's ``spot_basis``: the catalog holds on-demand list prices only)."""
    if getattr(spec, "spot", False):
        return backends.get_backend(spec.backend).spot_basis
    return "on-demand list price"


def cost_after(status: Any) -> dict[str, Any] | None:
    """``{"usd", "basis", "price_region", "price_date", …}`` for a job with a billing record, else None:
    the first backend that recognises the record as its own prices it."""
    for name in backends.clouds():
        found = backends.get_backend(name).cost_after(status)
        if found is not None:
            return found
    return None


def where(info: Any, region: str | None) -> dict[str, Any]:
    """The price's region and date, and a note when the job ran in another region."""
    out = {"price_region": info.price_region, "price_date": info.price_date}
    if region and region != info.price_region:
        out["price_note"] = f"price of {info.price_region}; the job ran in {region}"
    return out
