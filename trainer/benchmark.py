"""``--benchmark``: fixed steps on synthetic data, examples/s for this strategy and precision.

The input is one random batch per replica, made on the device and repeated,
so the number measures the model step (forward, backward, all-reduce,
update) and not the input pipeline, as in the source articles' 1-vs-N GPU
and FP32-vs-mixed tables. Warmup steps (tracing, autotuning) are not timed.
"""

from __future__ import annotations

from trainer import events
from trainer import plan as plan_lib
from trainer.runtime import Setup, announce, base_plan, build_model, synthetic_shape


def benchmark(s: Setup) -> int:
    from trainer import data as data_lib
    from trainer.loop import TrainLoop

    args, strategy = s.args, s.strategy
    shape, classes = synthetic_shape(args)
    replicas = strategy.num_replicas_in_sync
    batch = plan_lib.plan_batches(
        args.batch_size, replicas, args.lr, args.batch_size * replicas, scale_lr=not args.no_lr_scaling
    )
    model, optimizer = build_model(s, shape, classes, batch.lr)
    plan = base_plan(s)
    plan.update(
        batch=batch.as_dict() | {"steps_per_epoch": args.benchmark_steps},
        data={
            "name": "synthetic",
            "source": "one random batch per replica, on device",
            "train_examples": "-",
            "val_examples": 0,
            "input_shape": list(shape),
            "num_classes": classes,
        },
        params=model.count_params(),
        epochs=1,
        dirs={},
        dirs_origin={},
    )
    announce(s, plan)
    if args.plan_only:
        return 0
    loop = TrainLoop(strategy, model, optimizer, batch.global_batch)
    iterator = iter(data_lib.benchmark_input(strategy, args.batch_size, shape, classes))
    if args.warmup_steps:
        loop.train(iterator, args.warmup_steps, args.steps_per_execution)
    _, _, seconds = loop.train(iterator, args.benchmark_steps, args.steps_per_execution)
    if s.cluster.is_chief:
        events.emit(
            "benchmark",
            model=args.model,
            strategy=s.choice.name,
            replicas=replicas,
            precision=s.precision.policy,
            per_replica_batch=args.batch_size,
            global_batch=batch.global_batch,
            steps=args.benchmark_steps,
            seconds=seconds,
            examples_per_sec=args.benchmark_steps * batch.global_batch / seconds,
            step_time_ms=1000 * seconds / args.benchmark_steps,
        )
    return 0
