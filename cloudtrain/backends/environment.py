"""A backend's environment contract: what its machines show a job, as pure data.

``--local`` runs a job here the way its target backend would: the same variables, folders and files, which each
backend gives as ``Backend.local_contract`` (:mod:`.vertex.contract`, :mod:`.sagemaker.contract`), so the local
backend names no cloud. Nothing here touches the disk: :mod:`cloudtrain.backends.local.processes` creates what a
:class:`ReplicaPlan` lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec


@dataclass(frozen=True)
class ReplicaPlan:
    name: str  # the log prefix: "chief", "worker-0" (Vertex); "algo-1" (SageMaker)
    index: int  # 0 … n-1; 0 is the chief
    env: Mapping[str, str]  # the contract's variables only
    cwd: str
    model_dir: str
    checkpoint_dir: str
    tensorboard_dir: str
    dirs: tuple[str, ...] = ()  # folders to create before start
    files: Mapping[str, str] = field(default_factory=dict)  # path → text to write before start
    links: Mapping[str, str] = field(default_factory=dict)  # path → folder it links to (data channels)
    unpack: Mapping[str, str] = field(default_factory=dict)  # folder → script sdist whose source goes there


@dataclass(frozen=True)
class ReplicaLayout:
    """Where a local run's replicas run, and with what: ``output_dir`` is absolute and local; ``package``'s
    local path stands in for the upload; ``channels``: name → local folder (or one per host) holding its
    data; ``num_gpus``: per replica, or the same for each."""

    output_dir: str
    ports: Sequence[int]
    package: BuiltPackage
    channels: Mapping[str, str | Sequence[str]] = field(default_factory=dict)
    num_gpus: Sequence[int] | int = 0
    num_cpus: int = 1

    def gpus(self, replicas: int) -> list[int]:
        """Each replica's GPU count."""
        return [self.num_gpus] * replicas if isinstance(self.num_gpus, int) else list(self.num_gpus)


@dataclass(frozen=True)
class MachineRoot:
    """A fixed folder of the backend's machines that a trainer ignoring ``variable`` writes to
    (SageMaker's ``/opt/ml`` when ``SAGEMAKER_BASE_DIR`` is not read): on this machine it is
    outside the run's tree, so a ``--local`` run warns when it appears."""

    path: str
    variable: str


class EnvironmentContract(Protocol):
    """What replica *i* of *n* sees on a backend's machines. Hosts are ``127.0.0.1:<port>``."""

    shards_channels: bool  # a ``ShardedByS3Key`` channel gives each host its own share of the objects
    machine_root: MachineRoot | None  # None: every path the job is given is in the run's own tree

    def replica_names(self, n: int) -> list[str]:
        """The replicas' names, chief first (the log prefixes)."""
        ...

    def plan(self, spec: JobSpec, layout: ReplicaLayout) -> list[ReplicaPlan]:
        """Every replica's plan, laid out as ``layout`` says."""
        ...

    def script_argv(self, spec: JobSpec, plan: ReplicaPlan, python: str, package: BuiltPackage) -> list[str]:
        """What replica ``plan`` runs for a script (``package.script``), as this backend starts one."""
        ...


def join(base: str, *parts: str) -> str:
    """``base/part/…`` with one slash between (``base`` may end in one)."""
    return "/".join([base.rstrip("/"), *parts])
