"""Preemption: a run killed with SIGKILL mid-training resumes at the next epoch."""

from __future__ import annotations

import json

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
    """Run as SageMaker would start it (channel directory, SM_HPS, SM_MODEL_DIR), which
    also checks that contract end to end; the checkpoint dir is a flag so that
    /opt/ml/checkpoints on this machine is left alone."""
    (tmp_path / "training").mkdir()
    _digits_npz(tmp_path / "training" / "digits.npz")
    sagemaker = {
        "SM_MODEL_DIR": str(tmp_path / "model"),
        "SM_OUTPUT_DATA_DIR": str(tmp_path / "output"),
        "SM_CHANNEL_TRAINING": str(tmp_path / "training"),
        "SM_HPS": json.dumps({"epochs": EPOCHS}),
        "SM_HOSTS": '["algo-1"]',
        "SM_CURRENT_HOST": "algo-1",
        "TRAINING_JOB_NAME": "resume-test",
    }
    args = ["--checkpoint_dir", str(tmp_path / "checkpoints"), "--tensorboard_dir", str(tmp_path / "tb")]

    first = start(args, cwd=tmp_path, **sagemaker)
    lines = []
    assert first.stdout is not None and first.stderr is not None
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
    plan = killed.one("plan")
    assert plan["platform"] == "sagemaker" and plan["job_id"] == "resume-test"
    assert plan["data"]["origin"] == "SM_CHANNEL_TRAINING" and plan["data"]["name"] == "digits.npz"
    assert plan["epochs"] == EPOCHS  # from SM_HPS

    resumed = finish(start(args, cwd=tmp_path, **sagemaker))
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
    assert epochs[0]["lr"] == pytest.approx(schedule.learning_rate(r + 1, EPOCHS, plan["batch"]["lr"], "cosine"))
    # SageMaker's TF Serving layout, and metrics in both the model and the output data dir.
    assert (tmp_path / "model" / "1" / "saved_model.pb").exists()
    assert (tmp_path / "model" / "model.keras").exists()
    assert json.loads((tmp_path / "output" / "metrics.json").read_text())["resumed_from_epoch"] == r
