"""What a finished job cost: the first backend that recognises the job's billing record prices it
(SageMaker's billable seconds, Vertex AI's start and end times × its pools; each × the catalog's price,
:mod:`cloudtrain.catalog.cost`)."""

from __future__ import annotations

from cloudtrain.backends import clouds, get_backend
from cloudtrain.catalog.cost import Cost
from cloudtrain.job_states import JobStatus


def cost_after(status: JobStatus) -> Cost | None:
    """``{"usd", "basis", "price_region", "price_date", …}`` for a job with a billing record, else None:
    the first backend that recognises the record as its own prices it."""
    for name in clouds():
        found = get_backend(name).cost_after(status)
        if found is not None:
            return found
    return None
