"""TPUs without a TPU: the probe, the strategy chosen from TPU-shaped probe results, the TPU rules (no TensorFlow)."""

from __future__ import annotations

import json

import pytest

from trainer import tpu
from trainer.cluster import SINGLE, resolve_cluster
from trainer.errors import TrainerError
from trainer.hardware import Device
from trainer.plan import plan_batches, render_plan
from trainer.precision import choose_precision
from trainer.strategy import choose

CPU = [Device("/device:CPU:0", "CPU")]
V5E = tpu.TpuProbe(True, "v5litepod-4", None, "/dev/accel0, TPU_ACCELERATOR_TYPE")
TWO_WORKERS = resolve_cluster(
    {"TF_CONFIG": json.dumps({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 0}})}
)


@pytest.mark.parametrize(
    "environ, files, found, kind",
    [
        ({}, (), False, None),
        ({}, ("/dev/accel0",), True, None),  # v4 and later, v5e: the accelerator device files
        ({}, ("/dev/vfio/0",), True, None),  # v2/v3 TPU VMs
        ({"TPU_ACCELERATOR_TYPE": "v5litepod-4"}, (), True, "v5litepod-4"),
        ({"TPU_NAME": "local"}, (), True, None),
        ({"CUDA_VISIBLE_DEVICES": "0"}, ("/dev/nvidia0",), False, None),
    ],
)
def test_probe_finds_a_tpu_vm_by_its_device_files_or_environment(environ, files, found, kind):
    result = tpu.probe(environ, exists=lambda path: path in files)
    assert (result.found, result.accelerator_type) == (found, kind)


def test_auto_picks_tpu_strategy_when_the_probe_finds_a_tpu():
    choice = choose("auto", CPU, SINGLE, V5E)
    assert choice.name == "tpu" and "v5litepod-4" in choice.reason
    assert choose("auto", CPU, SINGLE, tpu.NO_TPU).name == "default"


def test_explicit_tpu_strategy_needs_a_tpu():
    assert choose("tpu", CPU, SINGLE, V5E).name == "tpu"
    with pytest.raises(TrainerError, match="--strategy tpu but this machine shows no TPU"):
        choose("tpu", CPU, SINGLE, tpu.NO_TPU)


def test_a_tpu_in_a_multi_worker_cluster_is_refused():
    with pytest.raises(TrainerError, match="multi-host TPU slices are not supported yet"):
        choose("auto", CPU, TWO_WORKERS, V5E)


def test_an_explicit_other_strategy_on_a_tpu_vm_is_honoured():
    assert choose("default", CPU, SINGLE, V5E).name == "default"


def test_global_batch_is_per_core_batch_times_cores():
    batch = plan_batches(64, 8, 0.001, 60_000)  # a v3-8 / v5e-8: 8 cores
    assert (batch.global_batch, batch.steps_per_epoch) == (512, 117)


def test_tpu_precision_is_bfloat16_by_default():
    rules, forced = tpu.rules("tpu"), tpu.rules("default", forced=True)
    assert rules.precision_accelerator == forced.precision_accelerator == "tpu"
    assert choose_precision("auto", "tpu").policy == "mixed_bfloat16"
    assert tpu.rules("mirrored").precision_accelerator is None


@pytest.mark.parametrize("steps_per_epoch, expected", [(117, 39), (100, 100), (1000, 100), (7, 7), (101, 1)])
def test_tpu_steps_per_execution_divide_the_epoch(steps_per_epoch, expected):
    rules = tpu.rules("tpu")
    assert rules.steps_per_execution(None, steps_per_epoch) == expected
    assert rules.steps_per_execution(5, steps_per_epoch) == 5  # --steps-per-execution wins
    assert tpu.rules("mirrored").steps_per_execution(None, steps_per_epoch) is None  # GPUs/CPUs auto-size


def test_static_shapes_only_under_the_tpu_rules():
    assert tpu.rules("tpu").static_shapes and tpu.rules("default", forced=True).static_shapes
    assert not tpu.rules("default").static_shapes


def test_plan_names_the_tpu_type_cores_and_topology():
    entry = tpu.describe(V5E, 4, [2, 2, 1, 1])
    assert entry == {"type": "v5litepod-4", "cores": 4, "topology": "2x2"}
    assert tpu.describe(tpu.TpuProbe(True, None, "2x4", "TPU_NAME"), 8, [2, 2, 1, 2])["topology"] == "2x4"
    plan = {
        "batch": {
            "replicas": 4,
            "per_replica_batch": 64,
            "global_batch": 256,
            "lr_scaled": False,
            "lr": 0.001,
            "base_lr": 0.001,
            "steps_per_epoch": 5,
        },
        "data": {
            "name": "digits",
            "source": "bundled",
            "train_examples": 1437,
            "val_examples": 360,
            "input_shape": [8, 8, 1],
            "num_classes": 10,
        },
        "platform": "vertex",
        "task": "chief",
        "devices": ["TPU:0"],
        "strategy": "tpu",
        "strategy_reason": "r",
        "workers": 1,
        "precision": "mixed_bfloat16",
        "precision_reason": "TPU",
        "lr_schedule": "cosine",
        "warmup_epochs": 0,
        "model": "cnn",
        "epochs": 1,
        "dirs": {},
        "dirs_origin": {},
        "tpu": entry,
        "tpu_rules": "TPUStrategy",
        "steps_per_execution": 5,
    }
    text = render_plan(plan)
    assert "TPU               v5litepod-4, 4 cores, topology 2x2" in text
    assert "TPU rules         static shapes, steps per call 5; TPUStrategy" in text
