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
per step that ``Model.fit`` pays.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Callable

import keras
import numpy as np
import tensorflow as tf

from trainer import tensorboard
from trainer.checkpoint import EpochCheckpoints


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


class TrainLoop:
    def __init__(self, strategy, model: keras.Model, optimizer, global_batch: int):
        self.strategy = strategy
        self.model = model
        self.optimizer = optimizer
        self.global_batch = global_batch
        self.replicas = strategy.num_replicas_in_sync
        self._loss_scaling = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
        # Outside the strategy scope: ordinary variables that only the reduced totals touch.
        self.train_totals = tf.Variable(tf.zeros([3]), trainable=False, name="train_totals")
        self.eval_totals = tf.Variable(tf.zeros([3]), trainable=False, name="eval_totals")
        self._train_fn = tf.function(self._train_steps)
        self._eval_fn = tf.function(self._eval_all)

    # --- per replica ---------------------------------------------------------------
    def _per_example(self, images, labels, training: bool):
        probs = self.model(images, training=training)
        losses = keras.losses.sparse_categorical_crossentropy(labels, probs)
        predicted = tf.argmax(probs, axis=-1, output_type=tf.int32)
        correct = tf.cast(tf.equal(predicted, tf.cast(labels, tf.int32)), tf.float32)
        return losses, correct

    def _replica_train_step(self, images, labels):
        with tf.GradientTape() as tape:
            losses, correct = self._per_example(images, labels, training=True)
            loss = tf.nn.compute_average_loss(losses, global_batch_size=self.global_batch)
            if self.model.losses:
                loss += tf.nn.scale_regularization_loss(tf.add_n(self.model.losses))
            # float16: scale up so small gradients survive; apply_gradients unscales them.
            scaled = self.optimizer.scale_loss(loss) if self._loss_scaling else loss
        variables = self.model.trainable_variables
        grads = tape.gradient(scaled, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
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

    def _eval_all(self, dataset):
        for images, labels in dataset:
            totals = self.strategy.run(self._replica_eval_step, args=(images, labels))
            self.eval_totals.assign_add(self.strategy.reduce("SUM", totals, axis=None))

    # --- eager API ----------------------------------------------------------------------
    def train(self, iterator, steps: int, steps_per_execution: int | None = None) -> tuple[float, float, float]:
        """Run ``steps`` steps; returns (mean loss, accuracy, seconds)."""
        self.train_totals.assign(tf.zeros([3]))
        chunk = steps_per_execution or steps
        start = time.perf_counter()
        done = 0
        while done < steps:
            n = min(chunk, steps - done)
            self._train_fn(iterator, tf.constant(n))
            done += n
        loss_sum, correct, count = self.train_totals.numpy()  # waits for the last step
        seconds = time.perf_counter() - start
        return float(loss_sum / max(count, 1)), float(correct / max(count, 1)), seconds

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


def run_epochs(
    loop: TrainLoop,
    checkpoints: EpochCheckpoints | None,
    train_iterator,
    eval_dataset,
    *,
    start_epoch: int,
    epochs: int,
    steps_per_epoch: int,
    steps_per_execution: int | None,
    lr_for_epoch: Callable[[int], float],
    checkpoint_every: int,
    writer,
    on_epoch: Callable[[EpochResult, str | None], None],
) -> list[EpochResult]:
    """Epochs ``start_epoch + 1 .. epochs``: train, evaluate, checkpoint, then report."""
    history = []
    for epoch in range(start_epoch + 1, epochs + 1):
        lr = lr_for_epoch(epoch)
        loop.optimizer.learning_rate = lr
        t0 = time.perf_counter()
        loss, acc, train_s = loop.train(train_iterator, steps_per_epoch, steps_per_execution)
        val_loss, val_acc = loop.evaluate(eval_dataset)
        saved = None
        if checkpoints and (epoch % checkpoint_every == 0 or epoch == epochs):
            saved = checkpoints.save(epoch)
        result = EpochResult(
            epoch=epoch,
            loss=loss,
            accuracy=acc,
            val_loss=val_loss,
            val_accuracy=val_acc,
            examples_per_sec=steps_per_epoch * loop.global_batch / train_s,
            epoch_time_s=time.perf_counter() - t0,
            train_time_s=train_s,
            lr=lr,
            steps=steps_per_epoch,
        )
        keys = ("loss", "accuracy", "val_loss", "val_accuracy", "examples_per_sec", "lr")
        tensorboard.write_scalars(writer, epoch, {k: getattr(result, k) for k in keys})
        history.append(result)
        on_epoch(result, saved)
    return history
