"""Strategy selection from devices and cluster (no TensorFlow)."""

from __future__ import annotations

import json

import pytest

from trainer.cluster import SINGLE, resolve_cluster
from trainer.errors import TrainerError
from trainer.hardware import Device
from trainer.strategy import choose

CPU = [Device("/device:CPU:0", "CPU")]
CPU2 = [Device("/device:CPU:0", "CPU"), Device("/device:CPU:1", "CPU")]
GPU1 = [Device("/device:GPU:0", "GPU", "Tesla T4", (7, 5))]
GPU4 = [Device(f"/device:GPU:{i}", "GPU", "Tesla V100", (7, 0)) for i in range(4)]
TWO_WORKERS = resolve_cluster(
    {"TF_CONFIG": json.dumps({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 0}})}
)


@pytest.mark.parametrize(
    "devices, cluster, name",
    [
        (CPU, SINGLE, "default"),
        (CPU2, SINGLE, "mirrored"),
        (GPU1, SINGLE, "one_device"),
        (GPU4, SINGLE, "mirrored"),
        (GPU4, TWO_WORKERS, "multi_worker_mirrored"),
        (CPU, TWO_WORKERS, "multi_worker_mirrored"),
    ],
)
def test_auto(devices, cluster, name):
    assert choose("auto", devices, cluster).name == name


def test_gpu_mirrored_reason_names_nccl():
    assert "NCCL" in choose("auto", GPU4, SINGLE).reason


def test_override_on_one_machine():
    assert choose("default", GPU4, SINGLE).name == "default"
    assert choose("one_device", GPU4, SINGLE).name == "one_device"
    assert choose("multi_worker_mirrored", CPU, SINGLE).name == "multi_worker_mirrored"


@pytest.mark.parametrize("requested", ["default", "one_device", "mirrored", "tpu"])
def test_single_machine_strategies_in_a_cluster_are_refused(requested):
    with pytest.raises(TrainerError, match="every worker would"):
        choose(requested, GPU4, TWO_WORKERS)


def test_unknown_strategy():
    with pytest.raises(TrainerError, match="not one of"):
        choose("horovod", CPU, SINGLE)
