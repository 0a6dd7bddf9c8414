"""TPU VMs on Vertex AI: the ``machineSpec`` of a single-host TPU VM.

The facts and checks are :mod:`cloudtrain.catalog.tpus`'s; this renders one request, as
cloud.google.com/vertex-ai/docs/training/configure-compute#tpu says: v2/v3 ``{"machineType": "cloud-tpu",
"acceleratorType": "TPU_V3", "acceleratorCount": 8}``, v5e ``{"machineType": "ct5lp-hightpu-4t", "tpuTopology":
"2x2"}``. One TPU VM per job for now: ``replica_count`` above 1 is refused."""

from __future__ import annotations

from typing import Any

from cloudtrain.catalog import tpus
from cloudtrain.errors import UsageError


def machine_spec(
    machine_type: str, accelerator: str | None, accelerator_count: int, topology: str | None, replica_count: int = 1
) -> dict[str, Any]:
    """The ``machineSpec`` (REST JSON) of a single-host TPU VM: accelerator fields for ``cloud-tpu``,
    ``tpuTopology`` for the types that take one. Several replicas (hosts) are refused in one line."""
    if replica_count > 1:
        raise UsageError(f"{replica_count} × {machine_type}: {tpus.MULTI_HOST}", hint="set replica_count: 1")
    spec: dict[str, Any] = {"machineType": machine_type}
    if topology:
        spec["tpuTopology"] = topology
    else:
        spec["acceleratorType"] = accelerator
        spec["acceleratorCount"] = accelerator_count
    return spec
