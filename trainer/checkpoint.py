"""Step checkpoints: what a restarted job needs to continue exactly where it stopped.

One ``tf.train.Checkpoint`` holds the model (with its dropout seed state), the
optimizer (slots, step count, loss scale, learning rate), the global step
counter, the running totals of the unfinished epoch and the input iterator's
position (``tf.data`` iterator checkpointing: the shuffle buffer and position
come back, so the next batch is the one the stopped run would have taken).

A checkpoint is never half-written: it is written into ``.tmp-ckpt-<step>-<pid>/``
and then renamed to ``ckpt-<step>/``; a process killed mid-write leaves only the
temporary folder, which the restore ignores (and the chief removes). On object
stores, where renaming a folder copies its objects one by one, the restore also
reads the newest folder and falls back to the one before if it cannot.

:class:`StepCheckpoints` is a ``tf.train.CheckpointManager`` so that TensorFlow's
``PreemptionCheckpointHandler`` saves through it (see :mod:`trainer.preemption`).

Multi-worker: every worker must take part in saving (saving can run
collectives), so non-chief workers save to a local temporary directory that
is deleted afterwards; all workers restore from the chief's directory, which
must be storage they all see (gs://, s3://, or one disk on one machine).
"""

from __future__ import annotations

import os
import posixpath
import re

import tensorflow as tf

from trainer import storage
from trainer.errors import TrainerError

PREFIX = "ckpt"
_FINAL = re.compile(r"^ckpt-(\d+)/?$")
_TEMP = ".tmp-ckpt-"


def _join(*parts: str) -> str:
    return posixpath.join(*parts) if "://" in parts[0] else os.path.join(*parts)


def complete_checkpoints(directory: str) -> list[tuple[int, str]]:
    """(step, checkpoint prefix) of every renamed (complete) checkpoint, oldest first."""
    if not tf.io.gfile.isdir(directory):
        return []
    found = []
    for name in tf.io.gfile.listdir(directory):
        m = _FINAL.match(name)
        if m:
            found.append((int(m.group(1)), _join(directory, name.rstrip("/"), PREFIX)))
    return sorted(found)


class StepCheckpoints(tf.train.CheckpointManager):
    """Write-then-rename checkpoints numbered by global step; keeps the newest ``keep``."""

    def __init__(self, directory: str, step: tf.Variable, *, is_chief: bool, rank: int, keep: int = 3, **trackables):
        self.directory_read = directory
        self.step = step  # int64: the global steps finished, advanced inside the train function
        checkpoint = tf.train.Checkpoint(global_step=step, **{k: v for k, v in trackables.items() if v is not None})
        self._temp = None
        write_dir = directory
        if not is_chief:
            self._temp = write_dir = storage.local_tempdir(f"trainer-worker{rank}-ckpt-")
        else:
            storage.makedirs(directory)
            self._remove_partial(directory)
        self._keep = keep
        self.last_saved: str | None = None
        super().__init__(checkpoint, write_dir, max_to_keep=keep)

    @staticmethod
    def _remove_partial(directory: str) -> None:
        """What a process killed mid-write left behind: never a checkpoint, only its temporary folder."""
        for name in tf.io.gfile.listdir(directory):
            if name.startswith(_TEMP):
                tf.io.gfile.rmtree(_join(directory, name.rstrip("/")))

    # --- tf.train.CheckpointManager, as PreemptionCheckpointHandler uses it -------------
    def save(self, checkpoint_number=None, check_interval=True, options=None) -> str:
        step = int(self.step.numpy()) if checkpoint_number is None else int(checkpoint_number)
        final = _join(self.directory, f"ckpt-{step}")
        temp = _join(self.directory, f"{_TEMP}{step}-{os.getpid()}")
        self.checkpoint.write(_join(temp, PREFIX), options=options)
        if tf.io.gfile.exists(final):  # saved at this step already (an epoch end, then a notice)
            tf.io.gfile.rmtree(final)
        tf.io.gfile.rename(temp, final)
        self.last_saved = _join(final, PREFIX)
        for _, old in complete_checkpoints(self.directory)[: -self._keep]:
            tf.io.gfile.rmtree(posixpath.dirname(old) if "://" in old else os.path.dirname(old))
        return self.last_saved

    def restore_or_initialize(self):
        return None  # restored by restore() before the handler exists

    @property
    def latest_checkpoint(self):
        found = complete_checkpoints(self.directory)
        return found[-1][1] if found else None

    # --- ours ---------------------------------------------------------------------------
    def restore(self) -> tuple[int, str | None]:
        """Global step of the newest readable checkpoint in the chief's directory (0 if none), and its path."""
        found = complete_checkpoints(self.directory_read)
        errors = []
        for _step, path in reversed(found):
            try:
                self.checkpoint.read(path).assert_existing_objects_matched()
            except (AssertionError, ValueError, tf.errors.OpError) as exc:
                errors.append(f"{path}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
                continue
            return int(self.step.numpy()), path
        if errors:
            raise TrainerError(
                f"no checkpoint in {self.directory_read} matches this model/optimizer ({'; '.join(errors[:2])}); "
                "use another --checkpoint-dir or --no-resume"
            )
        return 0, None

    def close(self) -> None:
        if self._temp:
            storage.remove_local(self._temp)


def agree_across_workers(strategy, value: int, num_workers: int) -> None:
    """Fail loudly if workers restored different steps (checkpoint dir not shared):
    otherwise they would run different step counts and hang in an all-reduce."""
    if num_workers <= 1:
        return
    # ReduceOp has only SUM and MEAN: all values equal iff mean(v^2) == mean(v)^2.
    local = tf.constant([float(value), float(value) ** 2], dtype=tf.float64)
    mean, mean_sq = strategy.reduce("MEAN", strategy.run(lambda: tf.identity(local)), axis=None).numpy()
    if abs(mean_sq - mean**2) > 1e-6 * max(1.0, mean**2):
        raise TrainerError(
            f"workers restored checkpoints of different steps (this one: {value}, mean {mean:g}): "
            "the checkpoint directory must be storage every worker can read"
        )
