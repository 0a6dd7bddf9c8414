"""What a backend can do, as one typed set, with its reason for each thing it cannot (``capabilities.refusal(X)``)."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


class Capability(enum.Enum):
    """One thing a backend's jobs can do (or a way its jobs run)."""

    BILLED = "billed"  # a job costs the catalog's prices (not: this machine)
    TPUS = "tpus"  # a TPU machine runs the TPU image (not: the CPU/GPU image, or none)
    WRITES_BUCKETS = "writes_buckets"  # its jobs write to bucket URIs (not: to local folders only)
    FOLLOWS_TARGET = "follows_target"  # runs under another backend's contract, the config's ``target``
    #: Its jobs run here, as the user: user credentials for secrets, no region, project or bill; Ctrl-C stops them
    RUNS_HERE = "runs_here"
    MANAGED_TENSORBOARD = "managed_tensorboard"  # a managed TensorBoard in the request (``tensorboard:``)
    SWEEPS_HERE = "sweeps_here"  # it runs a sweep's trials itself, one Optuna study here (not: the cloud tunes)
    STAGING = "staging"  # it stages packages and outputs in a bucket of its ``storage_schemes``
    CONTAINERS = "containers"  # it runs the config's own ``container:``
    SPOT_MAX_WAIT = "spot_max_wait"  # its spot capacity takes a wait limit (``spot.max_wait``)
    FLEX_START = "flex_start"  # it has a flex-start scheduling strategy (``flex_start:``)
    SCRIPT_ARGS = "script_args"  # a ``package.script`` job takes the config's ``args`` (not only hyperparameters)
    #: Its SDK passes a script ``--model_dir`` unasked (the estimator's), so a script job gets it by default
    SCRIPT_MODEL_DIR = "script_model_dir"
    #: It runs on a cluster it owns: no catalog; its own checks read region, machine, data and scheduling
    CLUSTER = "cluster"
    #: It runs the package in a Python environment it builds for the job, not in a training image
    BUILDS_ENVIRONMENT = "builds_environment"
    ANY_REGISTRY = "any_registry"  # its ``container:`` may come from any registry (not: its ``image_registry`` only)
    #: ``distribution: {parameter_server: {enabled: true}}`` (the SageMaker estimator's): a server beside each worker
    PARAMETER_SERVERS = "parameter_servers"


@dataclass(frozen=True)
class Refusal:
    """Why a backend cannot do something, as a config error says it: the message and the fix.
    ``{title}``, ``{backend}`` and the check's own fields (``{image}``) are filled in where it is printed."""

    message: str
    hint: str

    def format(self, **fields: str) -> tuple[str, str]:
        return self.message.format(**fields), self.hint.format(**fields)


#: What a refusal says when the backend gives no reason of its own.
DEFAULT_REFUSALS: Mapping[Capability, Refusal] = MappingProxyType(
    {
        Capability.CONTAINERS: Refusal(
            "{title} runs a Python package; it does not start containers ({image})",
            "run the package (package.path, package.module) instead of container",
        ),
        Capability.SPOT_MAX_WAIT: Refusal("{title} takes no spot.max_wait", "remove spot.max_wait"),
        Capability.FLEX_START: Refusal("{title} has no flex-start strategy", "remove flex_start"),
        Capability.SCRIPT_ARGS: Refusal(
            "{title} passes a script only its hyperparameters", "move each argument to hyperparameters: {{name: value}}"
        ),
        Capability.PARAMETER_SERVERS: Refusal(
            "{title} starts no parameter servers; SageMaker's distribution.parameter_server runs one on each host "
            "beside its worker (TF_CONFIG: master, worker, ps)",
            "run it with backend: sagemaker (or local with target: sagemaker), or use multi_worker_mirrored_strategy",
        ),
        Capability.MANAGED_TENSORBOARD: Refusal(
            "{title} has no managed TensorBoard, and its runs need none: "
            "`cloudtrain tensorboard JOB` serves their event files here",
            "remove tensorboard:",
        ),
    }
)


@dataclass(frozen=True)
class Capabilities:
    """The set of what a backend can do, and its reason for each of the others it states one for."""

    has: frozenset[Capability] = frozenset()
    reasons: Mapping[Capability, Refusal] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def of(cls, has: Iterable[Capability], **reasons: Refusal) -> Capabilities:
        """``Capabilities.of({Capability.TPUS}, FLEX_START=Refusal(...))``: reasons keyed by member name."""
        own = {Capability[name]: why for name, why in reasons.items()}
        found = frozenset(has)
        both = found & set(own)
        if both:
            raise ValueError(f"a reason to refuse what it has: {', '.join(sorted(c.name for c in both))}")
        return cls(found, MappingProxyType(own))

    def __contains__(self, capability: object) -> bool:
        return capability in self.has

    def refusal(self, capability: Capability) -> Refusal:
        """The backend's reason it cannot do ``capability`` (its own, else the default)."""
        own = self.reasons.get(capability)
        return own if own is not None else DEFAULT_REFUSALS.get(capability, Refusal("{title} cannot do that", ""))


#: What a backend has when it says nothing: a billed cloud job writing buckets, running containers and scripts.
DEFAULT_CAPABILITIES = Capabilities.of(
    {
        Capability.BILLED,
        Capability.WRITES_BUCKETS,
        Capability.CONTAINERS,
        Capability.ANY_REGISTRY,
        Capability.SCRIPT_ARGS,
    }
)
