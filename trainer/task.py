"""Entry point: ``python -m trainer.task [flags]`` (``--help`` lists them).

Resolve the platform, devices, strategy and precision (``runtime.setup``),
then either ``--benchmark`` or train: data, plan (printed once), model and
optimizer under the strategy scope, resume from the latest checkpoint, the
epoch loop, export and ``metrics.json``. User errors end as one ``ERROR:``
line and exit status 2 (``--debug`` shows the traceback).
"""

from __future__ import annotations

import os
import sys
import time

from trainer import cli, events, metrics, preemption, schedule
from trainer import plan as plan_lib
from trainer.data_spec import channel_path, parse_data_spec
from trainer.errors import TrainerError
from trainer.runtime import Setup, announce, base_plan, build_model, setup, synthetic_shape


def _load_data(s: Setup):
    from trainer import data as data_lib

    args, contract = s.args, s.contract
    shape, classes = synthetic_shape(args)
    spec = parse_data_spec(args.data, contract.train_data, contract.train_data_var or "", contract.channels)
    val_channel = channel_path(args.val_data, contract.channels)
    val_location = val_channel[0] if val_channel else args.val_data
    if not val_location and spec.origin != "--data":  # an explicit path: no platform validation channel
        val_location = contract.val_data
    data = data_lib.load(
        spec,
        val_location,
        val_split=args.val_split,
        seed=args.seed,
        synthetic_shape=shape,
        synthetic_classes=classes,
        synthetic_examples=args.synthetic_examples,
    )
    # SageMaker's ShardedByS3Key: each host holds its share already; not to be sharded again.
    presharded = (spec.location in contract.presharded, (val_location or spec.location) in contract.presharded)
    if presharded[0] and s.cluster.num_workers > 1:
        data_lib.pool_shards(s.strategy, data)
    return spec, data, presharded


def train(s: Setup, started: float) -> int:
    from trainer import data as data_lib
    from trainer import tensorboard
    from trainer.checkpoint import StepCheckpoints, agree_across_workers
    from trainer.loop import CallSizer, TrainLoop, run_epochs

    args, cluster, strategy, dirs = s.args, s.cluster, s.strategy, s.contract.dirs
    # first: SIGTERM during start-up counts too
    notice = None if args.no_preemption_handler else preemption.make_notice(s.contract.platform)
    spec, data, presharded = _load_data(s)
    batch = plan_lib.plan_batches(
        args.batch_size,
        strategy.num_replicas_in_sync,
        args.lr,
        data.train_examples,
        scale_lr=not args.no_lr_scaling,
        max_steps_per_epoch=args.steps_per_epoch,
    )
    model, optimizer = build_model(s, data.input_shape, data.num_classes, batch.lr)
    rules = s.tpu_rules
    host_input = not rules.active  # TPUs (and --tpu-rules) take their input through the distributed iterator
    loop = TrainLoop(
        strategy,
        model,
        optimizer,
        batch.global_batch,
        local_replicas=strategy.num_replicas_in_sync // cluster.num_workers if host_input else 1,
    )
    cache = not args.no_cache

    def pipeline(skip: int = 0):
        return data_lib.train_pipeline(
            data,
            batch.global_batch,
            args.seed,
            cache=cache,
            shuffle_buffer=args.shuffle_buffer,
            num_workers=cluster.num_workers,
            presharded=presharded[0],
            worker=cluster.rank if host_input else None,
            skip_batches=skip,
        )

    train_iterator = iter(pipeline()) if host_input else None
    ckpts = StepCheckpoints(
        dirs.checkpoint_dir,
        loop.step,
        is_chief=cluster.is_chief,
        rank=cluster.rank,
        model=model,
        optimizer=optimizer,
        epoch_totals=loop.train_totals,
        input=train_iterator,
        # dropout seeds and batch-norm statistics: Keras 3 models do not hand them to the checkpoint
        model_state=list(model.non_trainable_variables),
    )
    start_step, restored = (0, None) if args.no_resume else ckpts.restore()
    agree_across_workers(strategy, start_step, cluster.num_workers)
    if not host_input:
        train_iterator = iter(strategy.experimental_distribute_dataset(pipeline(skip=start_step)))
    start_epoch = start_step // batch.steps_per_epoch

    plan = base_plan(s)
    plan.update(
        batch=batch.as_dict(),
        params=model.count_params(),
        data=data.describe()
        | {"origin": spec.origin, "sharding": data_lib.shard_policy(data, cluster.num_workers, presharded[0])},
        dirs={k: getattr(dirs, k) for k in ("model_dir", "checkpoint_dir", "tensorboard_dir", "output_dir")},
        dirs_origin=dict(dirs.origin),
        export_layout=s.contract.export_layout,
        resume_epoch=start_epoch,
        resume_step=start_step,
        resume_checkpoint=restored,
        steps_per_execution=rules.steps_per_execution(args.steps_per_execution, batch.steps_per_epoch)
        or f"auto (~{args.call_seconds:g} s per call)",
        static_shapes=rules.static_shapes,
        preemption=preemption.describe(s.contract.platform) if notice else preemption.OFF,
    )
    announce(s, plan)
    if args.plan_only:
        ckpts.close()
        return 0

    val = data_lib.eval_pipeline(
        data, batch.global_batch, cache=cache, presharded=presharded[1], static_shapes=rules.static_shapes
    )
    val_ds = strategy.experimental_distribute_dataset(val) if val is not None else None

    def on_preempted():
        assert notice is not None  # the guard that calls this exists only with a notice
        step = int(loop.step.numpy())
        ckpts.close()
        if cluster.is_chief:
            events.emit(
                "preempted",
                step=step,
                epoch=step // batch.steps_per_epoch + 1,
                steps_per_epoch=batch.steps_per_epoch,
                checkpoint=ckpts.last_saved,
                notice=notice.source,
                notice_at=notice.received_at,
                saved_at=time.time(),
                steps_per_call=sizer.steps,
            )
        else:
            print(f"preempted: saved step {step}; exiting {preemption.PREEMPTED_EXIT_CODE}", flush=True)

    guard = (
        preemption.Preemption(
            strategy,
            ckpts,
            notice,
            grace_period_s=preemption.grace_period(s.contract.platform),
            on_exit=on_preempted,
            inert=preemption.is_inert(s.contract.platform, s.devices),
            num_workers=cluster.num_workers,
        )
        if notice
        else preemption.Unguarded()
    )

    def on_epoch(result, saved):
        if cluster.is_chief:
            fields = {k: v for k, v in vars(result).items() if k != "epoch"}
            events.emit("epoch", epoch=result.epoch, epochs=args.epochs, **fields, checkpoint=saved)
            metrics.report_epoch(fields, result.epoch)

    sizer = CallSizer(
        rules.steps_per_execution(args.steps_per_execution, batch.steps_per_epoch),
        args.call_seconds,
        agree=lambda t: _mean_across_workers(strategy, t, cluster.num_workers),
    )
    history = run_epochs(
        loop,
        ckpts,
        train_iterator,
        val_ds,
        start_step=start_step,
        epochs=args.epochs,
        steps_per_epoch=batch.steps_per_epoch,
        sizer=sizer,
        run_call=guard.run,
        lr_for_epoch=lambda e: schedule.learning_rate(e, args.epochs, batch.lr, args.lr_schedule, args.warmup_epochs),
        checkpoint_every=args.checkpoint_every,
        writer=tensorboard.writer(dirs.tensorboard_dir, cluster.is_chief),
        on_epoch=on_epoch,
    )
    guard.close()
    ckpts.close()
    plan["steps_per_execution_used"] = sizer.steps
    return finish(s, loop, history, val_ds, plan, start_epoch, started, start_step)


def _mean_across_workers(strategy, value: float, num_workers: int) -> float:
    if num_workers <= 1:
        return value
    import tensorflow as tf

    local = tf.constant(value, dtype=tf.float32)
    return float(strategy.reduce("MEAN", strategy.run(lambda: tf.identity(local)), axis=None))


def finish(s: Setup, loop, history, val_ds, plan: dict, start_epoch: int, started: float, start_step: int = 0) -> int:
    """Export, metrics.json and the last event line."""
    from trainer import export

    cluster, dirs = s.cluster, s.contract.dirs
    if history:
        final = {k: getattr(history[-1], k) for k in ("loss", "accuracy", "val_loss", "val_accuracy")}
    else:  # restarted after the last epoch: report the restored model
        val_loss, val_acc = loop.evaluate(val_ds)
        final = {"loss": None, "accuracy": None, "val_loss": val_loss, "val_accuracy": val_acc}
    steady = history[1:] or history  # a process's first epoch includes tracing
    train_s = sum(r.train_time_s for r in steady)
    digest = loop.weights_digest()
    exports = export.export_model(
        loop.model, dirs.model_dir, s.contract.export_layout, is_chief=cluster.is_chief, rank=cluster.rank
    )
    summary = final | {
        "epochs": s.args.epochs,
        "epochs_run": len(history),
        "resumed_from_epoch": start_epoch,
        "resumed_from_step": start_step,
        "steps": int(loop.step.numpy()),
        "examples_per_sec": sum(r.steps for r in steady) * loop.global_batch / train_s if train_s else None,
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


def main(argv=None) -> int:
    started = time.perf_counter()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        args = cli.parse_args(sys.argv[1:] if argv is None else argv, os.environ)
        s = setup(args)
        if args.benchmark:
            from trainer.benchmark import benchmark

            code = benchmark(s)
        else:
            code = train(s, started)
        if code == 0 and s.cluster.is_multi_worker:
            from trainer import shutdown

            shutdown.leave_together(s.strategy, s.cluster)  # no worker leaves the others to find it gone
            shutdown.end_process(code)
        return code
    except TrainerError as exc:
        if debug:
            raise
        print(f"ERROR: {exc}", file=sys.stderr, flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
