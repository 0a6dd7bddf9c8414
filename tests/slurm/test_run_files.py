"""A Slurm run folder read through the login node (ssh, as a user's config reaches it): what
``cloudtrain outputs`` lists and ``cloudtrain tensorboard`` copies, only new bytes of a grown file."""

from __future__ import annotations

import os

import pytest

from cloudtrain.app.mirror import Mirror
from cloudtrain.backends.slurm.files import ClusterFolder
from cloudtrain.backends.slurm.shell import ClusterShell

pytestmark = [pytest.mark.slow, pytest.mark.server]


def test_a_run_folder_is_listed_and_copied_incrementally_over_ssh(slurm_login, tmp_path) -> None:
    run = tmp_path / "workdir" / "runs" / "mnist-1"
    (run / "logs" / "train").mkdir(parents=True)
    (run / "model").mkdir()
    (run / "logs" / "events.out.tfevents.1").write_bytes(b"first records;")
    (run / "logs" / "train" / "events.out.tfevents.2").write_bytes(b"train")
    (run / "model" / "saved_model.pb").write_bytes(b"m" * 70000)
    shell = ClusterShell(slurm_login.host, dict(os.environ))
    assert shell.remote

    outputs = ClusterFolder(shell, str(run))
    assert outputs.uri == f"{slurm_login.host}:{run}" and outputs.local_path is None
    assert {(f.path, f.size) for f in outputs.list()} == {
        ("logs/events.out.tfevents.1", 14),
        ("logs/train/events.out.tfevents.2", 5),
        ("model/saved_model.pb", 70000),
    }
    assert b"".join(outputs.read("model/saved_model.pb", 69990)) == b"m" * 10

    mirror = Mirror(ClusterFolder(shell, f"{run}/logs"), tmp_path / "copy")
    assert mirror.sync() == 19
    with open(run / "logs" / "events.out.tfevents.1", "ab") as grow:
        grow.write(b"second;")
    assert mirror.sync() == len(b"second;")
    assert (tmp_path / "copy" / "events.out.tfevents.1").read_bytes() == b"first records;second;"
    assert mirror.counts.list_calls == 2
