"""What a run resolves before the first TensorFlow op, and helpers both modes share.

Order matters: environment and flags first, then devices, then the strategy,
before TensorFlow runs any op: splitting the CPU into logical devices and
creating a multi-worker strategy are only possible at that point. Then the
precision policy, which must precede building the model.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trainer import env, events
from trainer import plan as plan_lib
from trainer import precision as precision_lib
from trainer import strategy as strategy_lib
from trainer import tpu as tpu_lib
from trainer.cluster import Cluster, resolve_cluster

if TYPE_CHECKING:
    import tensorflow as tf  # annotations only: TensorFlow loads after the environment is set


@dataclass
class Setup:
    """Everything resolved before the first TensorFlow op."""

    args: argparse.Namespace
    contract: env.Contract
    cluster: Cluster
    devices: list
    choice: strategy_lib.StrategyChoice
    strategy: tf.distribute.Strategy
    precision: precision_lib.Precision
    tpu_rules: tpu_lib.TpuRules = tpu_lib.rules("default")
    tpu: dict | None = None  # the plan's TPU entry: type, cores, topology


def setup(args) -> Setup:
    contract = env.resolve(
        os.environ,
        job_dir=args.job_dir,
        model_dir=args.model_dir,
        checkpoint_dir=args.checkpoint_dir,
        tensorboard_dir=args.tensorboard_dir,
        output_dir=args.output_dir,
    )
    cluster = resolve_cluster(os.environ)
    if cluster.is_multi_worker and cluster.source != "TF_CONFIG":
        os.environ["TF_CONFIG"] = json.dumps(cluster.tf_config)  # MultiWorkerMirroredStrategy reads it

    from trainer import hardware

    devices = hardware.detect(args.cpu_devices)
    found = tpu_lib.probe()
    choice = strategy_lib.choose(args.strategy, devices, cluster, found)
    tpu_plan = None
    if choice.name == "tpu":
        strategy, mesh = strategy_lib.build_tpu()
        devices = strategy_lib.tpu_devices()
        tpu_plan = tpu_lib.describe(found, strategy.num_replicas_in_sync, mesh)
    else:
        strategy = strategy_lib.build(choice, devices)
    rules = tpu_lib.rules(choice.name, forced=args.tpu_rules)
    precision = precision_lib.choose_precision(
        args.precision,
        rules.precision_accelerator or hardware.accelerator(devices),
        [d.compute_capability for d in hardware.gpus(devices)],
    )
    precision_lib.apply(precision)
    import keras

    keras.utils.set_random_seed(args.seed)
    return Setup(args, contract, cluster, devices, choice, strategy, precision, rules, tpu_plan)


def base_plan(s: Setup) -> dict:
    import keras
    import tensorflow as tf

    args = s.args
    return {
        "mode": "benchmark" if args.benchmark else "train",
        "platform": s.contract.platform,
        "job_id": s.contract.job_id,
        "task": s.cluster.task,
        "slurm": plan_lib.slurm_placement(os.environ),  # None outside Slurm
        "workers": s.cluster.num_workers,
        "devices": [d.describe() for d in s.devices],
        "strategy": s.choice.name,
        "strategy_reason": s.choice.reason,
        "replicas": s.strategy.num_replicas_in_sync,
        **({"tpu": s.tpu} if s.tpu else {}),
        **({"tpu_rules": s.tpu_rules.reason} if s.tpu_rules.active else {}),
        "precision": s.precision.policy,
        "precision_reason": s.precision.reason,
        "loss_scaling": s.precision.loss_scaling,
        "model": args.model,
        "epochs": args.epochs,
        "lr_schedule": args.lr_schedule,
        "warmup_epochs": args.warmup_epochs,
        "optimizer": args.optimizer,
        "seed": args.seed,
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
    }


def announce(s: Setup, plan: dict) -> None:
    """The plan block on every worker's log; the plan event from the chief only."""
    print(plan_lib.render_plan(plan), flush=True)
    if s.cluster.is_chief:
        events.emit("plan", **plan)


def build_model(s: Setup, input_shape, num_classes: int, lr: float):
    from trainer import models

    with s.strategy.scope():
        model = models.build_model(s.args.model, input_shape, num_classes, s.args.cnn_width)
        optimizer = models.build_optimizer(s.args.optimizer, lr, s.precision.loss_scaling)
        optimizer.build(model.trainable_variables)  # slots exist before a checkpoint restores them
    return model, optimizer


def synthetic_shape(args) -> tuple[tuple[int, ...], int]:
    from trainer.models import SYNTHETIC_SHAPES

    shape, classes = SYNTHETIC_SHAPES[args.model]
    return tuple(args.input_shape or shape), args.num_classes or classes
