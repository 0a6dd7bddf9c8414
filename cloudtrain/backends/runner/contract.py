"""The environment contract a ``--local`` run or a Slurm job follows: its target backend's, found through the registry.

Each backend that a local run can follow gives its contract as ``Backend.local_contract``
(:class:`~cloudtrain.backends.environment.EnvironmentContract`); this module asks for it by the
spec's target and adds what every contract shares: the ports check, a package's command, and how
this machine's GPUs are split between the replicas. Pure functions: no disk, no network."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cloudtrain.backends import get_backend
from cloudtrain.backends.environment import EnvironmentContract, ReplicaLayout, ReplicaPlan
from cloudtrain.errors import UsageError
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec

__all__ = ["ReplicaPlan", "argv", "contract_of", "gpu_assignment", "plan"]


def contract_of(spec: JobSpec) -> EnvironmentContract:
    """The contract of the backend whose machines ``spec`` runs as (``spec.cloud``)."""
    backend = get_backend(spec.cloud)
    if backend.local_contract is None:
        raise UsageError(f"--local cannot follow {backend.name}'s environment", hint="set target: to another backend")
    return backend.local_contract


def plan(
    spec: JobSpec,
    *,
    output_dir: str,
    ports: Sequence[int],
    package: BuiltPackage,
    channels: Mapping[str, str | Sequence[str]] | None = None,
    num_gpus: Sequence[int] | int = 0,
    num_cpus: int = 1,
) -> list[ReplicaPlan]:
    """Every replica's plan under the target's contract; ``output_dir`` is absolute and local; ``package``
    is the :class:`~cloudtrain.packaging.BuiltPackage` (its local path stands in for the upload);
    ``channels``: name → local folder holding that channel's data (linked into the run)."""
    if len(ports) != spec.replica_count:
        raise ValueError(f"need {spec.replica_count} ports, got {len(ports)}")
    layout = ReplicaLayout(output_dir, ports, package, dict(channels or {}), num_gpus, num_cpus)
    return contract_of(spec).plan(spec, layout)


def argv(spec: JobSpec, plan: ReplicaPlan, python: str, package: BuiltPackage) -> list[str]:
    """What replica ``plan`` runs: the cloud's command with this run's paths: ``python -m MODULE ARGS``, or a
    script with the hyperparameters as the SageMaker toolkit passes them (:meth:`JobSpec.script_args`)."""
    if not spec.package.script:
        return [python, "-m", spec.package.module, *spec.module_args()]
    return contract_of(spec).script_argv(spec, plan, python, package)


def gpu_assignment(num_gpus: int, n: int) -> list[str | None]:
    """``CUDA_VISIBLE_DEVICES`` per replica: an even split when there are enough GPUs,
    else ``None`` (all replicas see all GPUs and share them)."""
    if num_gpus == 0 or n == 1 or num_gpus < n:
        return [None] * n
    per = num_gpus // n
    return [",".join(str(g) for g in range(i * per, (i + 1) * per)) for i in range(n)]
