"""Pick and build the ``tf.distribute`` strategy: one flat function each.

``auto``:

- a TPU on this host (``trainer.tpu.probe``) -> ``tpu`` (TPUStrategy, one TPU VM);
- several chief/worker tasks in TF_CONFIG -> ``multi_worker_mirrored``
  (NCCL collectives on GPUs);
- more than one GPU (or ``--cpu-devices N`` > 1) -> ``mirrored`` (NCCL
  all-reduce on GPUs, reduction to one device for logical CPUs);
- one GPU -> ``one_device``;
- otherwise the ``default`` strategy on the CPU.

``--strategy`` overrides, and combinations that would silently train the
wrong thing are errors: a single-machine strategy inside a multi-worker
cluster would have every worker train its own model. ``choose`` is pure;
``build`` imports TensorFlow.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from trainer.cluster import Cluster
from trainer.errors import TrainerError
from trainer.hardware import Device
from trainer.tpu import NO_TPU, TpuProbe

CHOICES = ("auto", "default", "one_device", "mirrored", "multi_worker_mirrored", "tpu")


@dataclass(frozen=True)
class StrategyChoice:
    name: str
    reason: str


def choose(requested: str, devices: Sequence[Device], cluster: Cluster, tpu: TpuProbe = NO_TPU) -> StrategyChoice:
    """Pure: the strategy for what the hardware probes found (``devices``, and ``tpu`` on a TPU VM)."""
    if requested not in CHOICES:
        raise TrainerError(f"--strategy {requested!r} is not one of {', '.join(CHOICES)}")
    n_gpu = sum(d.kind == "GPU" for d in devices)
    n_cpu = sum(d.kind == "CPU" for d in devices)
    if cluster.is_multi_worker and requested not in ("auto", "multi_worker_mirrored"):
        raise TrainerError(
            f"--strategy {requested} in a {cluster.num_workers}-worker cluster ({cluster.source}): every worker "
            "would train its own copy; use multi_worker_mirrored (or auto)"
        )
    if requested == "tpu" and not tpu.found:
        raise TrainerError(
            "--strategy tpu but this machine shows no TPU (no /dev/accel0, /dev/vfio/0, TPU_NAME "
            "or TPU_ACCELERATOR_TYPE); drop --strategy tpu to train on what is here"
        )
    if requested == "auto":
        if tpu.found and cluster.is_multi_worker:
            raise TrainerError(
                f"a TPU VM in a {cluster.num_workers}-worker cluster ({cluster.source}): multi-host "
                "TPU slices are not supported yet; run one TPU VM"
            )
        if tpu.found:
            return StrategyChoice("tpu", f"{tpu.describe()}: TPUStrategy on the local TPU")
        if cluster.is_multi_worker:
            return StrategyChoice(
                "multi_worker_mirrored", f"{cluster.num_workers} workers in {cluster.source}, synchronous all-reduce"
            )
        if n_gpu > 1:
            return StrategyChoice("mirrored", f"{n_gpu} GPUs, NCCL all-reduce")
        if n_gpu == 1:
            return StrategyChoice("one_device", "1 GPU")
        if n_cpu > 1:
            return StrategyChoice("mirrored", f"CPU split into {n_cpu} logical devices")
        return StrategyChoice("default", "no GPU: default strategy on the CPU")
    if requested == "one_device" and len(devices) > 1:
        return StrategyChoice("one_device", f"--strategy one_device: uses 1 of {len(devices)} devices")
    return StrategyChoice(requested, f"--strategy {requested}")


def build(choice: StrategyChoice, devices: Sequence[Device]):
    """The strategy object. Call before any other TensorFlow op (multi-worker needs that)."""
    import tensorflow as tf

    names = [d.name for d in devices]
    on_gpu = any(d.kind == "GPU" for d in devices)
    if choice.name == "default":
        return tf.distribute.get_strategy()
    if choice.name == "one_device":
        return tf.distribute.OneDeviceStrategy(names[0])
    if choice.name == "mirrored":
        if on_gpu and len(names) > 1:
            reduce_ops = tf.distribute.NcclAllReduce()
        else:  # NCCL is GPU-only; logical CPU devices reduce through one device
            reduce_ops = tf.distribute.ReductionToOneDevice()
        return tf.distribute.MirroredStrategy(devices=names, cross_device_ops=reduce_ops)
    if choice.name == "multi_worker_mirrored":
        comm = tf.distribute.experimental.CommunicationImplementation
        options = tf.distribute.experimental.CommunicationOptions(implementation=comm.NCCL if on_gpu else comm.AUTO)
        return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    if choice.name == "tpu":
        return build_tpu()[0]
    raise TrainerError(f"unknown strategy {choice.name!r}")


def build_tpu():
    """``TPUStrategy`` on this TPU VM's own TPU, and the mesh shape TensorFlow found (for the plan)."""
    import tensorflow as tf

    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=os.environ.get("TPU_NAME") or "local")
        tf.config.experimental_connect_to_cluster(resolver)
        topology = tf.tpu.experimental.initialize_tpu_system(resolver)
    except (ValueError, RuntimeError, tf.errors.OpError) as exc:
        raise TrainerError(f"the TPU could not be reached: {exc}") from None
    return tf.distribute.TPUStrategy(resolver), list(getattr(topology, "mesh_shape", []) or [])


def tpu_devices() -> list[Device]:
    import tensorflow as tf

    return [Device(d.name, "TPU", "TPU core") for d in tf.config.list_logical_devices("TPU")]
