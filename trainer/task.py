"""Entry point: ``python -m trainer.task [flags]`` (``--help`` lists them).

Order matters: the environment and flags are resolved and the devices found
before TensorFlow runs any op, because splitting the CPU and creating a
multi-worker strategy are only possible at that point. Then: precision
policy, data, plan (printed once), model + optimizer under the strategy
scope, resume from the latest checkpoint, the epoch loop, export.
"""

from __future__ import annotations

import json
import os
import sys
import time

from trainer import cli, env, events, plan as plan_lib, precision as precision_lib, schedule
from trainer import strategy as strategy_lib
from trainer.cluster import resolve_cluster
from trainer.data_spec import parse_data_spec
from trainer.errors import TrainerError
from trainer.hardware import accelerator, gpus


def _resolve(args):
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
    return contract, cluster


def _setup_devices(args, cluster):
    from trainer import hardware

    devices = hardware.detect(args.cpu_devices)
    choice = strategy_lib.choose(args.strategy, devices, cluster)
    strategy = strategy_lib.build(choice, devices)
    if choice.name == "tpu":
        devices = strategy_lib.tpu_devices()
    precision = precision_lib.choose_precision(
        args.precision, accelerator(devices), [d.compute_capability for d in gpus(devices)]
    )
    precision_lib.apply(precision)
    return devices, choice, strategy, precision


def _base_plan(args, contract, cluster, devices, choice, strategy, precision) -> dict:
    import keras
    import tensorflow as tf

    return {
        "mode": "benchmark" if args.benchmark else "train",
        "platform": contract.platform,
        "job_id": contract.job_id,
        "task": cluster.task,
        "workers": cluster.num_workers,
        "devices": [d.describe() for d in devices],
        "strategy": choice.name,
        "strategy_reason": choice.reason,
        "replicas": strategy.num_replicas_in_sync,
        "precision": precision.policy,
        "precision_reason": precision.reason,
        "loss_scaling": precision.loss_scaling,
        "model": args.model,
        "epochs": args.epochs,
        "lr_schedule": args.lr_schedule,
        "warmup_epochs": args.warmup_epochs,
        "optimizer": args.optimizer,
        "seed": args.seed,
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
    }


def _build(args, strategy, precision, input_shape, num_classes, lr):
    from trainer import models

    with strategy.scope():
        model = models.build_model(args.model, input_shape, num_classes, args.cnn_width)
        optimizer = models.build_optimizer(args.optimizer, lr, precision.loss_scaling)
        optimizer.build(model.trainable_variables)
    return model, optimizer


def _synthetic_shape(args):
    from trainer.models import SYNTHETIC_SHAPES

    shape, classes = SYNTHETIC_SHAPES[args.model]
    return tuple(args.input_shape or shape), args.num_classes or classes


def benchmark(args, contract, cluster, devices, choice, strategy, precision) -> int:
    from trainer import data as data_lib
    from trainer.loop import TrainLoop

    shape, classes = _synthetic_shape(args)
    replicas = strategy.num_replicas_in_sync
    batch = plan_lib.plan_batches(
        args.batch_size, replicas, args.lr, args.batch_size * replicas, scale_lr=not args.no_lr_scaling
    )
    plan = _base_plan(args, contract, cluster, devices, choice, strategy, precision)
    plan["batch"] = batch.as_dict() | {"steps_per_epoch": args.benchmark_steps}
    plan["data"] = {"name": "synthetic", "source": "one random batch per replica, on device", "train_examples": "-",
                    "val_examples": 0, "input_shape": list(shape), "num_classes": classes}
    model, optimizer = _build(args, strategy, precision, shape, classes, batch.lr)
    plan.update(params=model.count_params(), epochs=1, dirs={}, dirs_origin={})
    print(plan_lib.render_plan(plan), flush=True)
    if cluster.is_chief:
        events.emit("plan", **plan)
    if args.plan_only:
        return 0
    loop = TrainLoop(strategy, model, optimizer, batch.global_batch)
    iterator = iter(data_lib.benchmark_input(strategy, args.batch_size, shape, classes))
    if args.warmup_steps:  # tracing, autotuning, first allocations
        loop.train(iterator, args.warmup_steps, args.steps_per_execution)
    _, _, seconds = loop.train(iterator, args.benchmark_steps, args.steps_per_execution)
    result = {
        "model": args.model,
        "strategy": choice.name,
        "replicas": replicas,
        "precision": precision.policy,
        "per_replica_batch": args.batch_size,
        "global_batch": batch.global_batch,
        "steps": args.benchmark_steps,
        "seconds": seconds,
        "examples_per_sec": args.benchmark_steps * batch.global_batch / seconds,
        "step_time_ms": 1000 * seconds / args.benchmark_steps,
    }
    if cluster.is_chief:
        events.emit("benchmark", **result)
    return 0


def train(args, contract, cluster, devices, choice, strategy, precision, started: float) -> int:
    from trainer import data as data_lib, export, tensorboard
    from trainer.checkpoint import EpochCheckpoints, agree_across_workers
    from trainer.loop import TrainLoop, run_epochs

    shape, classes = _synthetic_shape(args)
    spec = parse_data_spec(args.data, contract.train_data, contract.train_data_var or "")
    data = data_lib.load(spec, args.val_data or (contract.val_data if spec.origin != "--data" else None),
                         val_split=args.val_split, seed=args.seed, synthetic_shape=shape,
                         synthetic_classes=classes, synthetic_examples=args.synthetic_examples)
    batch = plan_lib.plan_batches(args.batch_size, strategy.num_replicas_in_sync, args.lr, data.train_examples,
                                  scale_lr=not args.no_lr_scaling, max_steps_per_epoch=args.steps_per_epoch)
    model, optimizer = _build(args, strategy, precision, data.input_shape, data.num_classes, batch.lr)
    dirs = contract.dirs
    ckpts = EpochCheckpoints(dirs.checkpoint_dir, model, optimizer, is_chief=cluster.is_chief, rank=cluster.rank)
    start_epoch, restored = (0, None) if args.no_resume else ckpts.restore()
    agree_across_workers(strategy, start_epoch, cluster.num_workers)

    plan = _base_plan(args, contract, cluster, devices, choice, strategy, precision)
    plan.update(
        batch=batch.as_dict(), data=data.describe() | {"origin": spec.origin}, params=model.count_params(),
        dirs={k: getattr(dirs, k) for k in ("model_dir", "checkpoint_dir", "tensorboard_dir", "output_dir")},
        dirs_origin=dict(dirs.origin), export_layout=contract.export_layout,
        resume_epoch=start_epoch, resume_checkpoint=restored,
    )
    print(plan_lib.render_plan(plan), flush=True)
    if cluster.is_chief:
        events.emit("plan", **plan)
    if args.plan_only:
        ckpts.close()
        return 0

    writer = tensorboard.writer(dirs.tensorboard_dir, cluster.is_chief)
    loop = TrainLoop(strategy, model, optimizer, batch.global_batch)
    train_ds = strategy.experimental_distribute_dataset(
        data_lib.train_pipeline(data, batch.global_batch, args.seed, cache=not args.no_cache,
                                shuffle_buffer=args.shuffle_buffer))
    val = data_lib.eval_pipeline(data, batch.global_batch, cache=not args.no_cache)
    val_ds = strategy.experimental_distribute_dataset(val) if val is not None else None

    def on_epoch(result, saved):
        if cluster.is_chief:
            fields = {k: v for k, v in vars(result).items() if k != "epoch"}
            events.emit("epoch", epoch=result.epoch, epochs=args.epochs, **fields, checkpoint=saved)

    history = run_epochs(
        loop, ckpts, iter(train_ds), val_ds, start_epoch=start_epoch, epochs=args.epochs,
        steps_per_epoch=batch.steps_per_epoch, steps_per_execution=args.steps_per_execution,
        lr_for_epoch=lambda e: schedule.learning_rate(e, args.epochs, batch.lr, args.lr_schedule, args.warmup_epochs),
        checkpoint_every=args.checkpoint_every, writer=writer, on_epoch=on_epoch,
    )
    if history:
        last = vars(history[-1])
        final = {k: last[k] for k in ("loss", "accuracy", "val_loss", "val_accuracy")}
    else:  # resumed a finished run: report the restored model
        val_loss, val_acc = loop.evaluate(val_ds)
        final = {"loss": None, "accuracy": None, "val_loss": val_loss, "val_accuracy": val_acc}
    steady = history[1:] or history  # the first epoch of a process includes tracing
    train_s = sum(r.train_time_s for r in steady)
    digest = loop.weights_digest()
    exports = export.export_model(model, dirs.model_dir, contract.export_layout,
                                  is_chief=cluster.is_chief, rank=cluster.rank)
    ckpts.close()
    summary = final | {
        "epochs": args.epochs,
        "epochs_run": len(history),
        "resumed_from_epoch": start_epoch,
        "examples_per_sec": sum(r.steps for r in steady) * batch.global_batch / train_s if train_s else None,
        "wall_time_s": time.perf_counter() - started,
        "weights_sha256": digest,
    }
    if not cluster.is_chief:
        events.emit("worker_done", task=cluster.task, rank=cluster.rank, weights_sha256=digest)
        return 0
    metrics = summary | {"history": [vars(r) for r in history], "exports": exports, "plan": plan}
    written = export.write_metrics(metrics, dirs.model_dir, dirs.output_dir)
    events.emit("done", **summary, model_dir=dirs.model_dir, exports=exports, metrics=written)
    return 0


def run(args, started: float) -> int:
    contract, cluster = _resolve(args)
    devices, choice, strategy, precision = _setup_devices(args, cluster)
    import keras

    keras.utils.set_random_seed(args.seed)
    if args.benchmark:
        return benchmark(args, contract, cluster, devices, choice, strategy, precision)
    return train(args, contract, cluster, devices, choice, strategy, precision, started)


def main(argv=None) -> int:
    started = time.perf_counter()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        args = cli.parse_args(sys.argv[1:] if argv is None else argv, os.environ)
        return run(args, started)
    except TrainerError as exc:
        if debug:
            raise
        print(f"ERROR: {exc}", file=sys.stderr, flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
