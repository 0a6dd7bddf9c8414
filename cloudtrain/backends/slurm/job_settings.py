"""What only a Slurm job reads of its config: the ``slurm:`` section, and the node it runs on.

The section's record is :class:`cloudtrain.backends.slurm.section.Slurm` (the schema reads it from the
registry); the job's typed settings, the node and its time limit (``--time``) are here."""

from __future__ import annotations

from dataclasses import dataclass

from cloudtrain.backends.base import Hardware
from cloudtrain.backends.slurm.section import NODE_TYPE, Slurm
from cloudtrain.catalog.records import MachineInfo
from cloudtrain.errors import UsageError
from cloudtrain.spec import BackendSettings, JobSpec

TIMEOUT_EXIT = 124  # what the batch shell exits with when it stopped the tasks for the time-limit warning


@dataclass(frozen=True)
class SlurmSettings(BackendSettings):
    section: Slurm | None = None  # the config's slurm: section
    gpu_type: str | None = None  # machine.accelerator_type: --gres=gpu:TYPE:N


def gpu_type(spec: JobSpec) -> str | None:
    """``machine.accelerator_type`` of a spec built for Slurm (None: any GPU)."""
    found = spec.backend_settings
    return found.gpu_type if isinstance(found, SlurmSettings) else None


def slurm_section(spec: JobSpec) -> Slurm:
    """The ``slurm:`` section of a spec built for the Slurm backend."""
    found = spec.backend_settings
    if not isinstance(found, SlurmSettings) or found.section is None:
        raise UsageError(f"job {spec.job_name}: no slurm: section", hint="add slurm: {workdir: /shared/folder}")
    return found.section


def slurm_node(gpus_per_node: int, gpu_type: str | None = None) -> MachineInfo:
    """A Slurm node as the catalog describes machines: whatever the partition holds, ``gpus_per_node``
    GPUs of the gres type ``gpu_type`` (else no known model), no price (the report counts GPU-hours instead)."""
    accelerator = (gpu_type or "GPU") if gpus_per_node else None
    return Hardware(accelerator, gpus_per_node, 0, 0.0).unpriced("slurm", NODE_TYPE)


def time_limit(max_runtime: int, max_gpu_hours: float | None, gpus: int) -> int:
    """Seconds of ``--time``: ``max_runtime``, cut so that ``gpus`` × time stays within ``max_gpu_hours``."""
    if max_gpu_hours is None or gpus == 0:
        return max_runtime
    return min(max_runtime, int(max_gpu_hours * 3600 / gpus))


def slurm_time(seconds: int) -> str:
    """``--time`` as Slurm reads it: ``D-HH:MM:SS`` (whole minutes are what it schedules by; seconds kept)."""
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
