"""What a finished job cost: the first backend that recognises the job's billing record prices it
(SageMaker's billable seconds, Vertex AI's start and end times × its pools; each × the catalog's price,
:mod:`cloudtrain.catalog.cost`)."""

from __future__ import annotations

from cloudtrain.backends import LOCAL, usable
from cloudtrain.catalog.cost import Cost
from cloudtrain.job_states import JobStatus


def cost_after(status: JobStatus) -> Cost | None:
    """``{"usd", "basis", "price_region", "price_date", …}`` for a job with a billing record, else None:
    the first backend that recognises the record as its own prices it."""
    for name, backend in usable():  # a plugin that cannot be loaded is one warning, not this job's failure
        found = None if name == LOCAL else backend.cost_after(status)
        if found is not None:
            return found
    return None
