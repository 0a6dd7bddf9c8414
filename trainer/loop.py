"""The custom training loop: ``strategy.run`` inside ``tf.function``.

One code path for the default, one-device, mirrored, multi-worker and TPU
strategies. Each replica computes the loss of its share of the global batch
divided by the *global* batch size, so the all-reduced (summed) gradients are
the gradients of the global mean loss, whatever the replica count. With
float16 the loss is scaled before the gradient and the LossScaleOptimizer
unscales (and skips non-finite steps) in ``apply_gradients``.

Per step, each replica returns [loss sum, correct, examples]; one reduce per
step adds them to plain variables, read once per epoch. Several steps run per
``tf.function`` call (a ``tf.range`` loop), which removes the Python overhead
per step that ``Model.fit`` pays. A call is bounded to about a second
(:class:`CallSizer`): a preemption notice is acted on between calls, so that
bounds the work a notice can cost.

Input: each worker reads its share of every global batch from a plain
``tf.data`` iterator (checkpointable, unlike the distributed iterator), and each
local replica takes its slice of that share inside ``strategy.run``. TPUs keep
the distributed iterator, and resume by skipping the batches already consumed.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import keras
import numpy as np
import tensorflow as tf

from trainer import tensorboard


@dataclass
class EpochResult:
    epoch: int
    loss: float
    accuracy: float
    val_loss: float | None
    val_accuracy: float | None
    examples_per_sec: float
    epoch_time_s: float
    train_time_s: float
    lr: float
    steps: int
    resumed_at_step: int | None = None  # the epoch was continued from a checkpoint this many steps in


class TrainLoop:
    def __init__(self, strategy, model: keras.Model, optimizer, global_batch: int, *, local_replicas: int = 1):
        self.strategy = strategy
        self.model = model
        self.optimizer = optimizer
        self.global_batch = global_batch
        self.replicas = strategy.num_replicas_in_sync
        self.local_replicas = local_replicas  # >1: the worker's batch is split among them in strategy.run
        self._loss_scaling = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
        # Outside the strategy scope: ordinary variables that only the reduced totals touch.
        self.train_totals = tf.Variable(tf.zeros([3]), trainable=False, name="train_totals")
        self.eval_totals = tf.Variable(tf.zeros([3]), trainable=False, name="eval_totals")
        self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
        self._train_fn = tf.function(self._train_steps)
        self._eval_fn = tf.function(self._eval_all)

    # --- per replica ---------------------------------------------------------------
    def _per_example(self, images, labels, training: bool):
        probs = self.model(images, training=training)
        losses = keras.losses.sparse_categorical_crossentropy(labels, probs)
        predicted = tf.argmax(probs, axis=-1, output_type=tf.int32)
        correct = tf.cast(tf.equal(predicted, tf.cast(labels, tf.int32)), tf.float32)
        return losses, correct

    def _my_share(self, images, labels):
        """This replica's slice of the worker's batch (sliced on the host, then copied)."""
        ctx = tf.distribute.get_replica_context()
        index = ctx.replica_id_in_sync_group % self.local_replicas
        size = tf.shape(labels)[0] // self.local_replicas
        with tf.device("/device:CPU:0"):
            return images[index * size : (index + 1) * size], labels[index * size : (index + 1) * size]

    def _replica_train_step(self, images, labels):
        if self.local_replicas > 1:
            images, labels = self._my_share(images, labels)
        with tf.GradientTape() as tape:
            losses, correct = self._per_example(images, labels, training=True)
            loss = tf.nn.compute_average_loss(losses, global_batch_size=self.global_batch)
            if self.model.losses:
                loss += tf.nn.scale_regularization_loss(tf.add_n(self.model.losses))
            # float16: scale up so small gradients survive; apply_gradients unscales them.
            scaled = self.optimizer.scale_loss(loss) if self._loss_scaling else loss
        variables = self.model.trainable_variables
        grads = tape.gradient(scaled, variables)
        self.optimizer.apply_gradients(zip(grads, variables, strict=True))
        return tf.stack([tf.reduce_sum(losses), tf.reduce_sum(correct), tf.cast(tf.size(correct), tf.float32)])

    def _replica_eval_step(self, images, labels):
        losses, correct = self._per_example(images, labels, training=False)
        return tf.stack([tf.reduce_sum(losses), tf.reduce_sum(correct), tf.cast(tf.size(correct), tf.float32)])

    # --- cross replica, traced once --------------------------------------------------
    def _train_steps(self, iterator, steps):
        for _ in tf.range(steps):
            images, labels = next(iterator)
            totals = self.strategy.run(self._replica_train_step, args=(images, labels))
            self.train_totals.assign_add(self.strategy.reduce("SUM", totals, axis=None))
        self.step.assign_add(tf.cast(steps, tf.int64))

    def _eval_all(self, dataset):
        for images, labels in dataset:
            totals = self.strategy.run(self._replica_eval_step, args=(images, labels))
            self.eval_totals.assign_add(self.strategy.reduce("SUM", totals, axis=None))

    # --- eager API ----------------------------------------------------------------------
    def call(self, iterator, steps: int) -> None:
        """One ``tf.function`` call of ``steps`` steps (what the preemption handler wraps)."""
        self._train_fn(iterator, tf.constant(steps))

    def totals(self) -> tuple[float, float]:
        """Mean loss and accuracy since the totals were last reset (waits for the last step)."""
        loss_sum, correct, count = self.train_totals.numpy()
        return float(loss_sum / max(count, 1)), float(correct / max(count, 1))

    def train(self, iterator, steps: int, steps_per_execution: int | None = None) -> tuple[float, float, float]:
        """Run ``steps`` steps; returns (mean loss, accuracy, seconds)."""
        self.train_totals.assign(tf.zeros([3]))
        chunk = steps_per_execution or steps
        start = time.perf_counter()
        done = 0
        while done < steps:
            n = min(chunk, steps - done)
            self.call(iterator, n)
            done += n
        loss, acc = self.totals()
        return loss, acc, time.perf_counter() - start

    def evaluate(self, dist_dataset) -> tuple[float | None, float | None]:
        if dist_dataset is None:
            return None, None
        self.eval_totals.assign(tf.zeros([3]))
        self._eval_fn(dist_dataset)
        loss_sum, correct, count = self.eval_totals.numpy()
        if count == 0:
            return None, None
        return float(loss_sum / count), float(correct / count)

    def weights_digest(self) -> str:
        """sha256 of every weight: equal on all workers iff they stayed in sync."""
        h = hashlib.sha256()
        for v in self.model.weights:
            h.update(np.ascontiguousarray(v.numpy()).tobytes())
        return h.hexdigest()


class CallSizer:
    """Steps per ``tf.function`` call: ``fixed``, or chosen from measured step time so that a
    call takes about ``target_s`` (the first call traces, the second is timed).

    ``agree`` turns this worker's measured seconds per step into the value every worker
    uses (a mean over workers), so that all run the same steps per call: the preemption
    handler counts calls, and workers must save after the same one."""

    def __init__(self, fixed: int | None, target_s: float = 1.0, agree: Callable[[float], float] = lambda t: t):
        self.steps = fixed
        self.target_s = target_s
        self._agree = agree
        self._calls = 0
        self.step_time_s: float | None = None

    @property
    def measuring(self) -> bool:
        return self.steps is None

    def next(self, remaining: int) -> int:
        return min(self.steps or 1, remaining)

    def observe(self, steps: int, seconds: float) -> None:
        if self.steps is not None:
            return
        self._calls += 1
        if self._calls >= 2:
            self.step_time_s = self._agree(seconds / steps)
            self.steps = max(1, int(self.target_s / max(self.step_time_s, 1e-6)))


def run_epochs(
    loop: TrainLoop,
    checkpoints,
    train_iterator,
    eval_dataset,
    *,
    start_step: int,
    epochs: int,
    steps_per_epoch: int,
    sizer: CallSizer,
    run_call: Callable,
    lr_for_epoch: Callable[[int], float],
    checkpoint_every: int,
    writer,
    on_epoch: Callable[[EpochResult, str | None], None],
) -> list[EpochResult]:
    """From global step ``start_step`` (mid-epoch after a notice) to the end: train in bounded
    calls (each through ``run_call``, the preemption handler), evaluate, checkpoint, report."""
    history = []
    first_epoch, offset = start_step // steps_per_epoch + 1, start_step % steps_per_epoch
    for epoch in range(first_epoch, epochs + 1):
        resumed = offset if epoch == first_epoch and offset else None
        lr = lr_for_epoch(epoch)
        loop.optimizer.learning_rate = lr
        if resumed is None:
            loop.train_totals.assign(tf.zeros([3]))  # else: the stopped run's totals came back with the checkpoint
        t0 = time.perf_counter()
        done = resumed or 0
        while done < steps_per_epoch:
            n = sizer.next(steps_per_epoch - done)
            c0 = time.perf_counter()
            run_call(loop.call, train_iterator, n)
            if sizer.measuring:
                loop.totals()  # wait for the device before timing the call
                sizer.observe(n, time.perf_counter() - c0)
            done += n
        loss, acc = loop.totals()
        train_s = time.perf_counter() - t0
        val_loss, val_acc = loop.evaluate(eval_dataset)
        saved = None
        if checkpoints and (epoch % checkpoint_every == 0 or epoch == epochs):
            saved = checkpoints.save()
        steps = steps_per_epoch - (resumed or 0)
        result = EpochResult(
            epoch=epoch,
            loss=loss,
            accuracy=acc,
            val_loss=val_loss,
            val_accuracy=val_acc,
            examples_per_sec=steps * loop.global_batch / train_s,
            epoch_time_s=time.perf_counter() - t0,
            train_time_s=train_s,
            lr=lr,
            steps=steps,
            resumed_at_step=resumed,
        )
        keys = ("loss", "accuracy", "val_loss", "val_accuracy", "examples_per_sec", "lr")
        tensorboard.write_scalars(writer, epoch, {k: getattr(result, k) for k in keys})
        history.append(result)
        on_epoch(result, saved)
    return history
