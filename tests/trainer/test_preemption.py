"""Checkpoint on notice with the real trainer: SIGTERM at a random step saves and exits 5,
the restart continues at that step (mid-epoch) and ends where an uninterrupted run ends."""

from __future__ import annotations

import json
import os
import random
import signal
import time

import numpy as np
import pytest

from tests.trainer.helpers import Run, finish, free_ports, kill, start
from trainer import preemption
from trainer.checkpoint import complete_checkpoints
from trainer.events import parse_events

pytestmark = [pytest.mark.slow, pytest.mark.tf]

EPOCHS, STEPS = 8, 20  # two workers' global batch of 64 gives digits 22 steps per epoch: capped at 20
# 8 epochs, not 3: on a quiet machine the two epochs left after the first took ~0.3 s, and a notice
# sent up to 0.15 s after the epoch-1 line (read late through the pipe) could land after training ended.
# One step per call, so a notice lands mid-epoch; digits, so a run takes seconds.
ARGS = ["--epochs", str(EPOCHS), "--steps-per-epoch", str(STEPS), "--steps-per-execution", "1", "--seed", "7"]


def _sigterm_during(proc, after_epoch: int, rng: random.Random) -> Run:
    """SIGTERM at a random moment of the epoch after ``after_epoch``; the run's output."""
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith(f'{{"event": "epoch", "epoch": {after_epoch},'):
            time.sleep(rng.uniform(0.0, 0.15))
            proc.send_signal(signal.SIGTERM)
            break
    run = finish(proc, timeout=120)
    out = "".join(lines) + run.stdout
    return Run(run.returncode, out, run.stderr, parse_events(out))


def _model_weights(checkpoint_dir) -> dict[str, np.ndarray]:
    import tensorflow as tf

    _, newest = complete_checkpoints(str(checkpoint_dir))[-1]
    reader = tf.train.load_checkpoint(newest)
    names = [n for n in reader.get_variable_to_shape_map() if n.startswith(("optimizer/", "model_state/"))]
    return {n: reader.get_tensor(n) for n in names}


def test_one_device_sigterm_saves_exits_5_and_resumes_to_the_same_weights(tmp_path):
    rng = random.Random()
    full = finish(start([*ARGS, "--job-dir", str(tmp_path / "full")], cwd=tmp_path))
    assert full.returncode == 0, full.stderr[-3000:]

    job = ["--job-dir", str(tmp_path / "cut")]
    cut = _sigterm_during(start([*ARGS, *job], cwd=tmp_path), after_epoch=1, rng=rng)
    assert cut.returncode == preemption.PREEMPTED_EXIT_CODE, cut.stderr[-3000:]
    saved = cut.one("preempted")
    step = saved["step"]
    assert STEPS < step < EPOCHS * STEPS and saved["notice"] == "SIGTERM"
    assert saved["checkpoint"].endswith(f"ckpt-{step}/ckpt")
    assert complete_checkpoints(str(tmp_path / "cut" / "checkpoints"))[-1][0] == step
    assert not cut.of("done")

    resumed = finish(start([*ARGS, *job], cwd=tmp_path))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    plan = resumed.one("plan")
    assert plan["resume_step"] == step and plan["resume_epoch"] == step // STEPS
    epochs = resumed.of("epoch")
    stopped = step // STEPS + 1
    assert [e["epoch"] for e in epochs] == list(range(stopped, EPOCHS + 1))
    if step % STEPS:
        assert epochs[0]["resumed_at_step"] == step % STEPS and epochs[0]["steps"] == STEPS - step % STEPS
    # Metrics line up, the stopped epoch included (its totals came back with the checkpoint).
    by_epoch = {e["epoch"]: e for e in full.of("epoch")}
    for e in epochs:
        for key in ("loss", "accuracy", "val_loss", "val_accuracy", "lr"):
            assert e[key] == pytest.approx(by_epoch[e["epoch"]][key], rel=1e-4, abs=1e-6), (e["epoch"], key)
    assert resumed.one("done")["steps"] == full.one("done")["steps"] == EPOCHS * STEPS
    # ...and so do the final weights.
    want, got = _model_weights(tmp_path / "full" / "checkpoints"), _model_weights(tmp_path / "cut" / "checkpoints")
    assert want.keys() == got.keys() and len(want) >= 8
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5, err_msg=name)


def _start_workers(tmp_path, args):
    hosts = [f"127.0.0.1:{port}" for port in free_ports(2)]
    procs = []
    for index in range(2):
        tf_config = json.dumps({"cluster": {"worker": hosts}, "task": {"type": "worker", "index": index}})
        procs.append(start([*args, "--job-dir", str(tmp_path / "job")], cwd=tmp_path, TF_CONFIG=tf_config))
    return procs


def test_two_workers_sigterm_to_one_saves_on_both_and_resumes_to_the_same_step_count(tmp_path):
    """The notice reaches one worker only (as when one VM is reclaimed); both save at the same step."""
    rng = random.Random()
    procs = _start_workers(tmp_path, ARGS)
    try:
        target = rng.choice(procs)
        chief_lines = []
        for line in procs[0].stdout:
            chief_lines.append(line)
            if line.startswith('{"event": "epoch", "epoch": 1,'):
                time.sleep(rng.uniform(0.0, 0.15))
                target.send_signal(signal.SIGTERM)
                break
        runs = [finish(p, timeout=120) for p in procs]
    finally:
        for p in procs:
            kill(p)
    for run in runs:
        assert run.returncode == preemption.PREEMPTED_EXIT_CODE, run.stderr[-3000:]
    chief_out = "".join(chief_lines) + runs[0].stdout
    saved = Run(0, chief_out, "", parse_events(chief_out)).one("preempted")
    step = saved["step"]
    assert STEPS < step < EPOCHS * STEPS
    assert f"saved step {step};" in runs[1].stdout  # the other worker saved after the same step

    procs = _start_workers(tmp_path, ARGS)
    try:
        chief, other = (finish(p, timeout=300) for p in procs)
    finally:
        for p in procs:
            kill(p)
    assert chief.returncode == 0 and other.returncode == 0, chief.stderr[-2000:] + other.stderr[-2000:]
    assert chief.one("plan")["resume_step"] == step
    done, worker_done = chief.one("done"), other.one("worker_done")
    assert done["steps"] == EPOCHS * STEPS
    assert done["weights_sha256"] == worker_done["weights_sha256"]
    assert [e["epoch"] for e in chief.of("epoch")] == list(range(step // STEPS + 1, EPOCHS + 1))


def test_sigkill_during_a_checkpoint_write_leaves_the_previous_one_usable(tmp_path):
    """Killed while ckpt-<2 epochs> is being written: the restart resumes from the epoch before."""
    checkpoints = tmp_path / "job" / "checkpoints"
    wide = ["--epochs", "3", "--steps-per-epoch", "4", "--cnn-width", "256", "--job-dir", str(tmp_path / "job")]
    proc = start(wide, cwd=tmp_path)
    try:
        partial = None
        while proc.poll() is None and partial is None:
            done = complete_checkpoints(str(checkpoints))
            temps = [p for p in checkpoints.glob(".tmp-ckpt-*")] if done else []
            if temps:
                os.killpg(proc.pid, signal.SIGKILL)
                partial = temps[0]
            time.sleep(0.001)
        proc.wait(timeout=30)
    finally:
        kill(proc)
    assert partial is not None and proc.returncode == -signal.SIGKILL
    previous = complete_checkpoints(str(checkpoints))[-1][0]
    assert partial.name.startswith(f".tmp-ckpt-{previous + 4}-")  # the write the kill interrupted

    resumed = finish(start(wide, cwd=tmp_path))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert resumed.one("plan")["resume_step"] == previous
    assert not list(checkpoints.glob(".tmp-ckpt-*"))  # the chief removed the partial write
