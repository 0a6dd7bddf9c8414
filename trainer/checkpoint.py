"""Epoch checkpoints for resuming after preemption.

``tf.train.Checkpoint`` holds the model, the optimizer (its slots, step count
and loss scale) and the number of finished epochs; ``CheckpointManager``
keeps the last few. A restarted job restores the latest one and continues at
the next epoch, with the learning rate that epoch would have had.

Multi-worker: every worker must take part in saving (saving can run
collectives), so non-chief workers save to a local temporary directory that
is deleted afterwards; all workers restore from the chief's directory, which
must be storage they all see (gs://, s3://, or one disk on one machine).
"""

from __future__ import annotations

import tensorflow as tf

from trainer import storage
from trainer.errors import TrainerError


class EpochCheckpoints:
    def __init__(self, directory: str, model, optimizer, *, is_chief: bool, rank: int, keep: int = 3):
        self.directory = directory
        self.epoch = tf.Variable(0, dtype=tf.int64, trainable=False, name="finished_epochs")
        self.checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, finished_epochs=self.epoch)
        self._temp = None
        write_dir = directory
        if not is_chief:
            self._temp = write_dir = storage.local_tempdir(f"trainer-worker{rank}-ckpt-")
        else:
            storage.makedirs(directory)
        self.manager = tf.train.CheckpointManager(self.checkpoint, write_dir, max_to_keep=keep)

    def restore(self) -> tuple[int, str | None]:
        """Finished epochs in the latest checkpoint of the chief's directory (0 if none) and its path."""
        latest = tf.train.latest_checkpoint(self.directory)
        if latest is None:
            return 0, None
        try:
            self.checkpoint.restore(latest).assert_existing_objects_matched()
        except (AssertionError, ValueError, tf.errors.OpError) as exc:
            raise TrainerError(
                f"checkpoint {latest} does not match this model/optimizer ({type(exc).__name__}: {exc}); "
                "use another --checkpoint-dir or --no-resume"
            ) from None
        return int(self.epoch.numpy()), latest

    def save(self, finished_epochs: int) -> str:
        self.epoch.assign(finished_epochs)
        return self.manager.save(checkpoint_number=finished_epochs)

    def close(self) -> None:
        if self._temp:
            storage.remove_local(self._temp)


def agree_across_workers(strategy, value: int, num_workers: int) -> None:
    """Fail loudly if workers restored different epochs (checkpoint dir not shared):
    otherwise they would run different step counts and hang in an all-reduce."""
    if num_workers <= 1:
        return
    # ReduceOp has only SUM and MEAN: all values equal iff mean(v^2) == mean(v)^2.
    local = tf.constant([float(value), float(value) ** 2])
    mean, mean_sq = strategy.reduce("MEAN", strategy.run(lambda: tf.identity(local)), axis=None).numpy()
    if abs(mean_sq - mean**2) > 1e-6:
        raise TrainerError(
            f"workers restored checkpoints of different epochs (this one: {value}, mean {mean:g}): "
            "the checkpoint directory must be storage every worker can read"
        )
