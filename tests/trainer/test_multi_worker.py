"""Two processes on 127.0.0.1 under MultiWorkerMirroredStrategy, driven by TF_CONFIG."""

from __future__ import annotations

import json

import pytest

from bench.multi_worker_end import ABORT  # the lines the bench counts
from tests.trainer.helpers import finish, free_ports, kill, start

pytestmark = [pytest.mark.slow, pytest.mark.tf]


def _run_two_workers(tmp_path, extra_args, worker_env=({}, {}), **env):
    workers = [f"127.0.0.1:{port}" for port in free_ports(2)]
    procs = []
    try:
        for index in range(2):
            tf_config = json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}})
            args = ["--epochs", "2", "--job-dir", str(tmp_path / f"w{index}"), *extra_args[index]]
            procs.append(start(args, cwd=tmp_path, TF_CONFIG=tf_config, **env, **worker_env[index]))
        return [finish(p, timeout=400) for p in procs]
    finally:
        for p in procs:
            kill(p)


def test_two_workers_train_in_sync_and_only_the_chief_exports(tmp_path):
    chief, other = _run_two_workers(tmp_path, [[], []])
    assert chief.returncode == 0, chief.stderr[-4000:]
    assert other.returncode == 0, other.stderr[-4000:]
    # They leave together (trainer/shutdown.py): no coordination service aborts at the end.
    # (One run; bench/multi_worker_end.py repeats it to measure the rate.)
    assert [line for line in (chief.stderr + other.stderr).splitlines() if ABORT.search(line)] == []

    plan = chief.one("plan")
    assert plan["strategy"] == "multi_worker_mirrored" and plan["workers"] == 2 and plan["replicas"] == 2
    assert plan["batch"]["global_batch"] == 2 * plan["batch"]["per_replica_batch"]
    assert [e["epoch"] for e in chief.of("epoch")] == [1, 2]
    done, worker_done = chief.one("done"), other.one("worker_done")
    assert other.of("plan") == [] and other.of("epoch") == []  # events come from the chief only
    assert worker_done["task"] == "worker-1"  # as the log prefix names the replica
    assert done["weights_sha256"] == worker_done["weights_sha256"]  # same weights after all-reduce
    assert done["loss"] < 2.0

    chief_model = tmp_path / "w0" / "model"
    assert {"saved_model.pb", "model.keras", "metrics.json"} <= {p.name for p in chief_model.iterdir()}
    final_step = 2 * plan["batch"]["steps_per_epoch"]  # checkpoints are numbered by global step
    assert (tmp_path / "w0" / "checkpoints" / f"ckpt-{final_step}" / "ckpt.index").is_file()
    written_by_worker = [p for p in (tmp_path / "w1").rglob("*") if p.is_file()] if (tmp_path / "w1").exists() else []
    assert written_by_worker == []

    # Restarted with checkpoint dirs that are not shared: worker 1 sees no checkpoint while the
    # chief sees epoch 2. Both must stop with a clear error instead of hanging out of step.
    chief, other = _run_two_workers(tmp_path, [[], ["--checkpoint-dir", str(tmp_path / "not-shared")]])
    for run in (chief, other):
        assert run.returncode == 2, run.stderr[-3000:]
        assert "checkpoint directory must be storage every worker can read" in run.stderr


def _digits_tfrecords(folder, parts):
    """``parts``: file name → (start, end) rows of the uint8 digits."""
    import numpy as np
    from sklearn.datasets import load_digits

    from trainer.data import write_tfrecord

    digits = load_digits()
    x, y = np.clip(digits.images * 16, 0, 255).astype(np.uint8), digits.target
    folder.mkdir(parents=True)
    for name, (a, b) in parts.items():
        write_tfrecord(str(folder / name), x[a:b], y[a:b])
    return y


def test_two_workers_read_a_tfrecord_channel_each_its_own_files(tmp_path):
    """``--data train`` names the channel; with a file per worker the input is sharded by FILE."""
    channel = tmp_path / "channel"
    _digits_tfrecords(
        channel, {"part-0.tfrecord": (0, 700), "part-1.tfrecord": (700, 1400), "validation.tfrecord": (1400, None)}
    )
    args = ["--data", "train", "--epochs", "1", "--steps-per-epoch", "5"]
    chief, other = _run_two_workers(tmp_path, [args, args], SM_CHANNEL_TRAIN=str(channel))
    assert chief.returncode == 0, chief.stderr[-4000:]
    assert other.returncode == 0, other.stderr[-4000:]
    data = chief.one("plan")["data"]
    assert data["origin"] == "--data train (SM_CHANNEL_TRAIN)" and data["sharding"] == "file"
    assert (data["train_files"], data["train_examples"], data["val_examples"]) == (2, 1400, 397)
    assert chief.one("done")["weights_sha256"] == other.one("worker_done")["weights_sha256"]
    assert chief.one("done")["val_accuracy"] is not None


def test_a_channel_sagemaker_shards_by_key_is_not_sharded_again(tmp_path):
    """ShardedByS3Key: each host has its own files already; the workers pool the counts and the
    class count (the chief's share has no digit 9 at all) and train one model."""
    import numpy as np
    from sklearn.datasets import load_digits

    from trainer.data import write_tfrecord

    digits = load_digits()
    x, y = np.clip(digits.images * 16, 0, 255).astype(np.uint8), digits.target
    without_nines = [i for i in range(800, 1797) if y[i] != 9][:500]
    for host, rows in ((0, without_nines), (1, list(range(800)))):  # the chief's share lacks a class
        (tmp_path / f"host{host}").mkdir()
        write_tfrecord(str(tmp_path / f"host{host}" / f"part-{host}.tfrecord"), x[rows], y[rows])
    config = json.dumps({"train": {"S3DistributionType": "ShardedByS3Key", "TrainingInputMode": "File"}})
    args = ["--data", "train", "--epochs", "1", "--steps-per-epoch", "5"]
    chief, other = _run_two_workers(
        tmp_path,
        [args, args],
        SM_INPUT_DATA_CONFIG=config,
        worker_env=[{"SM_CHANNEL_TRAIN": str(tmp_path / f"host{i}")} for i in range(2)],
    )
    assert chief.returncode == 0, chief.stderr[-4000:]
    assert other.returncode == 0, other.stderr[-4000:]
    data = chief.one("plan")["data"]
    assert data["sharding"] == "off" and data["num_classes"] == 10
    assert data["train_examples"] == 800 + 500  # both shares, counted once each
    assert chief.one("done")["weights_sha256"] == other.one("worker_done")["weights_sha256"]
