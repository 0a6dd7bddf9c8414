"""The ``slurm:`` section of a job config: which cluster, where on it, and what ``sbatch`` is asked for.

The registry names this module (``register(..., section=...)``) and the config schema reads the record
from it, so it imports only config records: loading it loads neither the backend nor the schema
(``backends/slurm/__init__.py`` imports the backend only when ``BACKEND`` is read). No I/O here."""

from typing import Annotated, Any, Literal

from cloudtrain.config.problems import fill_cluster_keys
from cloudtrain.config.records import Field, Record, StrictBool, StrictInt, StrictStr

#: Slurm may send the warning signal up to 60 s before the time asked for; 90 s leaves a checkpoint at least 30 s.
MIN_GRACE_S = 90


class Slurm(Record):
    """Where a ``backend: slurm`` job runs and what its ``sbatch`` asks for."""

    section_description = "backend slurm: the cluster, its workdir and the sbatch options."

    login: StrictStr = Field(
        "",
        description='"" = sbatch is on this machine; else an ssh destination: user@host[:port] or a Host from '
        "~/.ssh/config (the system OpenSSH client runs it, so ProxyCommand / ProxyJump / agent keys work).",
    )
    partition: StrictStr | None = Field(None, description="--partition; unset = the cluster's default partition.")
    workdir: StrictStr = Field(
        description="An absolute folder on a filesystem every node sees; packages, environments and runs go under it."
    )
    account: StrictStr = Field("", description="--account (optional).")
    qos: StrictStr = Field("", description="--qos (optional).")
    constraint: StrictStr = Field("", description="--constraint (optional), e.g. a100.")
    exclusive: StrictBool = Field(False, description="--exclusive: no other job on the nodes.")
    sbatch: list[StrictStr] = Field(
        default_factory=list, description='More sbatch options, one a line, e.g. "--mem=0" (written as #SBATCH lines).'
    )
    setup: list[StrictStr] = Field(
        default_factory=list,
        description='Shell lines run on each node before the launcher, e.g. "module load cuda/12.2".',
    )
    python: StrictStr = Field("python3", description="The Python (>= 3.10) on the cluster that builds the environment.")
    requeue: StrictBool = Field(
        False,
        description="Continue after a time-limit warning, a preemption or a node failure: checkpoint, requeue "
        "(scontrol requeue) and resume at the saved step.",
    )
    tasks_per_node: Literal[1, "gpus"] = Field(
        1,
        description='1 = one task per node, seeing all its GPUs; "gpus" = one task per GPU '
        "(--ntasks-per-node=GPUs --gpus-per-task=1: each task its own CUDA_VISIBLE_DEVICES and TF_CONFIG entry).",
    )
    max_requeues: Annotated[StrictInt, Field(ge=0)] = Field(
        3,
        description="With requeue: how many times a job is requeued at most (as submitit's max_num_timeout); "
        "the run after the last ends timed out (124).",
    )
    grace: Annotated[StrictInt, Field(ge=MIN_GRACE_S)] = Field(
        120,
        description=f"Seconds before the time limit that the job is warned (--signal=B:USR1@grace; >= {MIN_GRACE_S}).",
    )


#: ``machine.type`` of every Slurm job: the nodes are whatever the partition holds.
NODE_TYPE = "slurm-node"
#: Keys a Slurm job does not take (the cluster decides), with the fix for each.
NOT_FOR_SLURM = {
    ("region",): "remove region: the cluster is slurm.login",
    ("machine", "type"): "remove machine.type: the partition (slurm.partition, slurm.constraint) picks the nodes",
    ("machine", "accelerator"): "remove machine.accelerator: GPUs per node are machine.accelerator_count",
    ("project",): "remove project",
    ("role_arn",): "remove role_arn",
    ("staging_bucket",): "remove staging_bucket",
    ("spot",): "remove spot: Slurm preemption is slurm.requeue",
    ("flex_start",): "remove flex_start",
    ("fallback",): "remove fallback (one cluster per config)",
    ("container",): "remove container: Slurm jobs run a package or a script",
    ("network",): "remove network",
    ("service_account",): "remove service_account",
    ("budget", "max_usd"): "use budget.max_gpu_hours on Slurm",
}


def slurm_of(config: object) -> Slurm | None:
    """A config's ``slurm:`` section (the schema adds it from the registry, so the checker cannot see it)."""
    found = getattr(config, "slurm", None)
    return found if isinstance(found, Slurm) else None


def cluster_of(login: str) -> str:
    """What history records as a Slurm job's ``region``: the login destination, or ``local``."""
    return login or "local"


def fill_slurm_keys(data: dict[str, Any]) -> list[tuple[tuple[str, ...], str, str]]:
    """A ``backend: slurm`` document before validation: the keys the schema requires of every
    backend that the cluster decides (``region`` = the cluster, ``machine.type``) filled in, and
    one ``(path, message, hint)`` per key written that a Slurm job does not take."""
    section = data.get("slurm")
    login = section.get("login") if isinstance(section, dict) else None
    return fill_cluster_keys(
        data, NOT_FOR_SLURM, "Slurm", cluster_of(login if isinstance(login, str) else ""), NODE_TYPE
    )
