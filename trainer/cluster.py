"""Which machine this process is in a multi-worker job, from the environment.

Sources, first found wins:

- ``TF_CONFIG`` (Vertex sets it for TF jobs; SageMaker's TF container writes it
  when multi-worker mirrored distribution is enabled);
- Vertex's ``CLUSTER_SPEC`` (workerpool0 -> chief, workerpool1 -> worker);
- SageMaker's ``SM_HOSTS`` + ``SM_CURRENT_HOST`` when several hosts run a
  generic image that wrote no TF_CONFIG (workers on port 2222).

Only synchronous data parallelism is supported: ``chief`` and ``worker`` tasks.
Parameter servers and evaluators are rejected rather than silently trained as
workers. ``Cluster.tf_config`` is what ``TF_CONFIG`` must hold for
``MultiWorkerMirroredStrategy``; ``task.py`` exports it when it was derived.
This module never imports TensorFlow.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from trainer.env import parse_json_env
from trainer.errors import TrainerError

SAGEMAKER_WORKER_PORT = 2222
_TRAINING_TASKS = ("chief", "worker")
_VERTEX_POOLS = {"workerpool0": "chief", "workerpool1": "worker", "workerpool2": "ps", "workerpool3": "evaluator"}


@dataclass(frozen=True)
class Cluster:
    task_type: str
    task_index: int
    workers: tuple[str, ...]  # chief first, then workers: the rank order
    source: str | None  # "TF_CONFIG", "CLUSTER_SPEC", "SM_HOSTS" or None
    tf_config: Mapping[str, object] | None
    host: str | None = None  # SageMaker's name for this machine (SM_CURRENT_HOST): "algo-1"

    @property
    def num_workers(self) -> int:
        return max(1, len(self.workers))

    @property
    def is_multi_worker(self) -> bool:
        return self.num_workers > 1

    @property
    def has_chief_task(self) -> bool:
        cluster = self.tf_config.get("cluster") if self.tf_config else None
        return isinstance(cluster, Mapping) and "chief" in cluster

    @property
    def rank(self) -> int:
        if self.task_type == "chief":
            return 0
        return self.task_index + (1 if self.has_chief_task else 0)

    @property
    def is_chief(self) -> bool:
        """The chief writes exports, checkpoints and summaries; worker 0 when no chief task."""
        return self.rank == 0

    @property
    def task(self) -> str:
        """This replica as the platform's log prefix names it: ``chief``, ``worker-0``, ``algo-2``."""
        if self.host:
            return self.host
        return "chief" if self.task_type == "chief" else f"{self.task_type}-{self.task_index}"


#: One machine, no cluster: it is the chief (Vertex's workerpool0, the local run's "chief").
SINGLE = Cluster(task_type="chief", task_index=0, workers=(), source=None, tf_config=None)


def from_tf_config(tf_config: object, source: str = "TF_CONFIG") -> Cluster:
    if not isinstance(tf_config, dict):
        raise TrainerError(f"{source} must be a JSON object, got {type(tf_config).__name__}")
    cluster = tf_config.get("cluster") or {}
    task = tf_config.get("task") or {}
    if not isinstance(cluster, dict) or not isinstance(task, dict):
        raise TrainerError(f"{source} needs 'cluster' and 'task' objects, got {tf_config!r}")
    unsupported = sorted(k for k, v in cluster.items() if k not in _TRAINING_TASKS and v)
    if unsupported:
        raise TrainerError(
            f"{source} has {', '.join(unsupported)} tasks; this trainer does synchronous data "
            "parallelism only (MultiWorkerMirroredStrategy): use chief and worker pools, "
            "no parameter servers or evaluators"
        )
    for kind in _TRAINING_TASKS:
        if not isinstance(cluster.get(kind, []), list):
            raise TrainerError(f"{source} cluster.{kind} must be a list of host:port, got {cluster[kind]!r}")
    if len(cluster.get("chief", [])) > 1:
        raise TrainerError(f"{source} lists {len(cluster['chief'])} chief tasks; at most one is allowed")
    workers = tuple(cluster.get("chief", [])) + tuple(cluster.get("worker", []))
    task_type = task.get("type")
    try:
        task_index = int(task.get("index", 0))
    except (TypeError, ValueError):
        raise TrainerError(f"{source} task.index must be an integer, got {task.get('index')!r}") from None
    if len(workers) <= 1 and task_type is None:
        return Cluster("worker", 0, workers, source, tf_config)
    if task_type not in _TRAINING_TASKS:
        raise TrainerError(f"{source} task.type is {task_type!r}; expected 'chief' or 'worker'")
    size = len(cluster.get(task_type, []))
    if not 0 <= task_index < size:
        raise TrainerError(f"{source} task {task_type}:{task_index} is not in the cluster ({size} {task_type} tasks)")
    return Cluster(task_type, task_index, workers, source, tf_config)


def from_cluster_spec(spec: object) -> Cluster:
    """Vertex's CLUSTER_SPEC uses pool names; map them to TF task types."""
    if not isinstance(spec, dict):
        raise TrainerError(f"CLUSTER_SPEC must be a JSON object, got {type(spec).__name__}")
    cluster = {_VERTEX_POOLS.get(pool, pool): hosts for pool, hosts in (spec.get("cluster") or {}).items()}
    task = dict(spec.get("task") or {})
    if "type" in task:
        task["type"] = _VERTEX_POOLS.get(task["type"], task["type"])
    tf_config = {"cluster": cluster, "task": {"type": task.get("type"), "index": task.get("index", 0)}}
    return from_tf_config(tf_config, source="CLUSTER_SPEC")


def from_sagemaker_hosts(hosts: list[str], current_host: str | None) -> Cluster:
    if current_host not in hosts:
        raise TrainerError(f"SM_CURRENT_HOST {current_host!r} is not among SM_HOSTS {hosts}")
    tf_config = {
        "cluster": {"worker": [f"{h}:{SAGEMAKER_WORKER_PORT}" for h in hosts]},
        "task": {"type": "worker", "index": hosts.index(current_host)},
    }
    return from_tf_config(tf_config, source="SM_HOSTS")


def resolve_cluster(environ: Mapping[str, str]) -> Cluster:
    host = environ.get("SM_CURRENT_HOST") or None  # SageMaker names its machines; keep that name for the plan
    if environ.get("TF_CONFIG", "").strip():
        cluster = from_tf_config(parse_json_env(environ, "TF_CONFIG", {}))
    elif environ.get("CLUSTER_SPEC", "").strip():
        cluster = from_cluster_spec(parse_json_env(environ, "CLUSTER_SPEC", {}))
    else:
        hosts = parse_json_env(environ, "SM_HOSTS", [])
        if isinstance(hosts, list) and len(hosts) > 1:
            cluster = from_sagemaker_hosts(hosts, environ.get("SM_CURRENT_HOST"))
        else:
            cluster = SINGLE
    return dataclasses.replace(cluster, host=host)
