"""A Slurm run folder read through the login node (ssh, as a user's config reaches it): what
``cloudtrain outputs`` lists and ``cloudtrain tensorboard`` copies, only new bytes of a grown file."""

from __future__ import annotations

import json
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


def test_a_slurm_jobs_files_are_its_run_folder_and_its_logs(slurm_login, tmp_path) -> None:
    from cloudtrain.backends.slurm.job import SlurmJob

    run = tmp_path / "workdir" / "runs" / "mnist-2"
    (run / "slurm" / "r0").mkdir(parents=True)
    (run / "logs").mkdir()
    (run / "slurm" / "r0" / "batch.exit").write_text("0\n")
    (run / "logs" / "events.out.tfevents.1").write_bytes(b"records")
    shell = ClusterShell(slurm_login.host, dict(os.environ))
    job = SlurmJob(shell, "424242", str(run), cluster=slurm_login.host, workdir=str(tmp_path / "workdir"))
    files = job.files()
    assert files.gone is None and not files.running  # ended: its batch exit file says so
    assert files.tensorboard is not None and files.tensorboard.uri == f"{slurm_login.host}:{run}/logs"
    assert [f.path for f in files.outputs["output"].list()] == [
        "logs/events.out.tfevents.1",
        "slurm/outcome.json",  # the outcome the status read kept (it stays true once Slurm forgets the job)
        "slurm/r0/batch.exit",
    ]
    kept = json.loads((run / "slurm" / "outcome.json").read_text())
    assert kept["state"] == job.status().state.value and kept["native"] == job.status().native_state
    gone = SlurmJob(shell, "424243", str(tmp_path / "nothing"), cluster=slurm_login.host, workdir=str(tmp_path))
    assert gone.files().gone == f"its run folder {tmp_path / 'nothing'} is not on the cluster"


def test_a_cluster_run_folder_is_read_by_the_one_reader_over_ssh(slurm_login, tmp_path) -> None:
    """Issue 48: the same rules as a folder here, on the cluster's side of the connection: a link out of the
    run, a linked folder and a FIFO are left out with one line each (the FIFO's read used to hang), a
    listed file's mode comes along, and a read of what is not listed is refused."""
    from cloudtrain.app.outputs import download, list_outputs
    from cloudtrain.backends.files import JobFiles

    run = tmp_path / "workdir" / "runs" / "mnist-3"
    (run / "model").mkdir(parents=True)
    (run / "model" / "saved_model.pb").write_bytes(b"m" * 100)
    os.chmod(run / "model" / "saved_model.pb", 0o600)
    secret = tmp_path / "credentials"
    secret.write_text("hunter2\n")
    os.symlink(secret, run / "model" / "creds")
    os.symlink(tmp_path, run / "all")
    os.mkfifo(run / "model" / "pipe")
    shell = ClusterShell(slurm_login.host, dict(os.environ))
    folder = ClusterFolder(shell, str(run))
    assert [(f.path, f.size, f.mode) for f in folder.list()] == [("model/saved_model.pb", 100, 0o600)]
    assert folder.notes == [
        "all is a link to a folder: not followed",
        f"model/creds is a link to {secret}, outside {run}: not read",
        "model/pipe is a FIFO: skipped",
    ]
    with pytest.raises(Exception, match="outside"):
        b"".join(folder.read("model/creds"))

    class Handle:
        job_id = "mnist-3"

        def files(self) -> JobFiles:
            return JobFiles({"output": folder})

    listing = list_outputs(Handle())  # type: ignore[arg-type]
    assert len(listing.notes) == 3
    download(listing, tmp_path / "got")
    assert (tmp_path / "got" / "model" / "saved_model.pb").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in (tmp_path / "got").rglob("*")) == ["model", "saved_model.pb"]
