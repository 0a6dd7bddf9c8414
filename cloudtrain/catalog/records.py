"""What the catalog hands out: a machine resolved for one cloud, its GPU model, and its error."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cloudtrain.errors import UsageError


class CatalogError(UsageError, ValueError):
    """A region, machine, accelerator, count or image the cloud would refuse: ``str()`` says what was received and what
    is allowed, ``alternatives`` the nearest valid options, ``field`` the setting at fault."""

    def __init__(self, message: str, alternatives: Sequence[str] = (), *, field: str | None = None):
        super().__init__(message)
        self.alternatives = tuple(alternatives)
        self.field = field


@dataclass(frozen=True)
class GpuModel:
    name: str  # "T4", "A100-80GB"
    memory_gb: float  # per GPU
    compute_capability: str  # "7.5"


@dataclass(frozen=True)
class TpuInfo:
    """A single-host TPU VM's accelerators: ``accelerator`` is Vertex's name (TPU_V5_LITEPOD)."""

    accelerator: str
    generation: str  # "v2", "v3", "v5e"
    chips: int
    cores: int  # TensorCores: what TPUStrategy counts as replicas
    topology: str | None  # "2x2" for types that take a tpuTopology; None for cloud-tpu (v2/v3)


@dataclass(frozen=True)
class MachineInfo:
    cloud: str  # one of data/clouds.json: vertex, sagemaker
    machine_type: str  # "n1-standard-16" | "ml.g4dn.12xlarge"
    vcpus: int
    memory_gb: float
    accelerator: str | None  # Vertex: "NVIDIA_TESLA_T4"; SageMaker: the GPU model name, "T4"
    accelerator_count: int
    gpu: GpuModel | None
    price_per_hour: float | None  # USD on-demand for the machine and its accelerators, in price_region
    price_region: str
    price_date: str
    tpu: TpuInfo | None = None  # a TPU VM (accelerator/count then say what Vertex's request carries)

    @property
    def gpu_memory_gb(self) -> float:
        """All GPU memory of the machine."""
        return self.gpu.memory_gb * self.accelerator_count if self.gpu else 0.0
