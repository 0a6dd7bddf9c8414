"""Preemption: a run killed with SIGKILL mid-training resumes at the next epoch."""

from __future__ import annotations

import numpy as np
import pytest

from tests.trainer.helpers import Run, finish, kill, start
from trainer import schedule
from trainer.events import parse_events

pytestmark = [pytest.mark.slow, pytest.mark.tf]

EPOCHS = 6


def _digits_npz(path):
    from sklearn.datasets import load_digits

    digits = load_digits()
    pixels = np.clip(digits.images * 16, 0, 255).astype(np.uint8)  # 0..16 -> 0..255
    np.savez(path, x_train=pixels, y_train=digits.target)


def test_sigkill_mid_training_then_rerun_resumes_at_the_next_epoch(tmp_path):
    _digits_npz(tmp_path / "digits.npz")
    args = ["--data", str(tmp_path / "digits.npz"), "--epochs", str(EPOCHS), "--job-dir", str(tmp_path / "job")]

    first = start(args, cwd=tmp_path)
    lines = []
    try:
        for line in first.stdout:  # each epoch line is printed after its checkpoint is written
            lines.append(line)
            if line.startswith('{"event": "epoch", "epoch": 2,'):
                kill(first)
                break
        first.wait(timeout=60)
    finally:
        kill(first)
    killed = Run(first.returncode, "".join(lines), first.stderr.read(), parse_events("".join(lines)))
    first.stderr.close()
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert [e["epoch"] for e in killed.of("epoch")] == [1, 2] and not killed.of("done")

    resumed = finish(start(args, cwd=tmp_path))
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    r = resumed.one("plan")["resume_epoch"]
    assert 2 <= r < EPOCHS  # 3 if epoch 3's checkpoint landed before the kill did
    epochs = resumed.of("epoch")
    assert [e["epoch"] for e in epochs] == list(range(r + 1, EPOCHS + 1))
    done = resumed.one("done")
    assert done["resumed_from_epoch"] == r and done["epochs_run"] == EPOCHS - r
    # The weights came back: the resumed epoch starts far below a fresh start's loss.
    assert epochs[0]["loss"] < 0.5 * killed.of("epoch")[0]["loss"]
    # ...and so did the schedule position.
    plan = resumed.one("plan")
    assert epochs[0]["lr"] == pytest.approx(schedule.learning_rate(r + 1, EPOCHS, plan["batch"]["lr"], "cosine"))
    assert (tmp_path / "job" / "model" / "saved_model.pb").exists()
