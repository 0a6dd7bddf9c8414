"""What a finished job cost: the cloud's own record (``Backend.cost_after``) × the catalog's list price. Each figure
names the price's reference region and date, said in the line when the job ran elsewhere."""

from __future__ import annotations

from typing import TypedDict

from cloudtrain.catalog.records import MachineInfo


class _Priced(TypedDict):
    usd: float
    basis: str
    price_region: str
    price_date: str


class Cost(_Priced, total=False):
    """What a finished job cost (``Backend.cost_after``): dollars, how they were reckoned, the price's
    region and date; the optional notes a backend adds (spot, another region, on-demand vs spot)."""

    price_note: str
    note: str
    on_demand_usd: float
    spot_savings_usd: float


def priced(usd: float, basis: str, info: MachineInfo, region: str | None) -> Cost:
    """``usd`` and its ``basis``, with the price's region and date, and a note when the job ran in another region."""
    out: Cost = {"usd": usd, "basis": basis, "price_region": info.price_region, "price_date": info.price_date}
    if region and region != info.price_region:
        out["price_note"] = f"price of {info.price_region}; the job ran in {region}"
    return out
