"""What a finished SageMaker job cost: ``BillableTimeInSeconds`` × the instance type's list price.

``BillableTimeInSeconds`` is what AWS bills (for managed spot, the time with machines, less the
savings), against ``TrainingTimeInSeconds``, per instance × the instance count."""

from __future__ import annotations

from cloudtrain import catalog
from cloudtrain.catalog.cost import Cost, priced
from cloudtrain.job_states import JobStatus

SPOT_BASIS = "on-demand list price; managed spot bills only BillableTimeInSeconds of it, known after the job"


def cost_after(status: JobStatus) -> Cost | None:
    details = status.details or {}
    if details.get("billable_seconds") is None or not details.get("instance_type"):
        return None
    try:
        info = catalog.resolve_machine("sagemaker", details["instance_type"], None, None)
    except catalog.CatalogError:
        return None
    if info.price_per_hour is None:
        return None
    billable = details["billable_seconds"]
    basis = f"BillableTimeInSeconds {billable} s (all instances) × {info.machine_type} ${info.price_per_hour}/h"
    out = priced(round(info.price_per_hour * billable / 3600, 4), basis, info, details.get("region"))
    training = details.get("training_seconds")
    if training and training > billable:
        on_demand = info.price_per_hour * training / 3600
        out["on_demand_usd"] = round(on_demand, 4)
        out["spot_savings_usd"] = round(on_demand - out["usd"], 4)
    return out
