"""Stops a local run records as the clouds would (PREEMPTED vs CANCELLED), and ``--resume``."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from cloudtrain.app.prepare import resumed
from cloudtrain.backends.base import JobState
from cloudtrain.backends.local.backend import LocalBackend
from cloudtrain.backends.local.record import RUN_DIR
from cloudtrain.errors import ExitCode, UsageError
from cloudtrain.history import RUNS_DIR as LOCAL_RUNS_DIR

from .conftest import JOB_NAME, make_spec


@pytest.fixture
def backend(shared_cache):
    return LocalBackend(cache_root=shared_cache, stop_grace_s=2.0, gpu_count=lambda: 0)


def test_a_replica_exiting_5_on_its_own_is_preempted_and_stops_the_others(backend, fake_package, tmp_path):
    env = {"FAKE_PLAN": json.dumps({"chief": "fail:5", "worker-0": "hang"})}
    status = backend.submit(make_spec(tmp_path, replica_count=2, env=env), fake_package).wait()
    assert status.state is JobState.PREEMPTED and status.state.exit_code == ExitCode.PREEMPTED
    assert status.details["exit_code"] == 5 and status.details["preempted_replica"] == "chief"
    assert status.details["exit_codes"]["worker-0"] != 0  # stopped by cloudtrain
    assert status.message.startswith("preempted") and "no checkpoint saved" in status.message


def test_cancel_from_another_process_stays_cancelled_when_replicas_exit_5(backend, fake_package, tmp_path, monkeypatch):
    """`cloudtrain cancel` elsewhere sends the same SIGTERM a platform would: the marker tells them apart."""
    from cloudtrain.backends.local import backend as local_backend

    claim = local_backend._claim

    def claim_then_cancel(out, spec):  # the marker `cancel` writes, in the run's own (freshly claimed) folder
        claim(out, spec)
        (out / RUN_DIR / "cancel-requested").touch()

    monkeypatch.setattr(local_backend, "_claim", claim_then_cancel)
    env = {"FAKE_PLAN": json.dumps({"chief": "fail:5"})}
    spec = make_spec(tmp_path, env=env)
    status = backend.submit(spec, fake_package).wait()
    assert status.state is JobState.CANCELLED and status.details["exit_code"] == ExitCode.INTERRUPTED


def test_resume_continues_a_local_runs_checkpoints_in_a_new_run(backend, fake_package, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = backend.submit(make_spec(tmp_path, output_dir=str(tmp_path / LOCAL_RUNS_DIR / JOB_NAME)), fake_package)
    assert first.wait().state is JobState.SUCCEEDED
    old = tmp_path / LOCAL_RUNS_DIR / JOB_NAME / "checkpoints"
    (old / "ckpt-40").mkdir(parents=True)
    (old / "ckpt-40" / "ckpt.index").write_text("stands for the trainer's files")

    spec = resumed(make_spec(tmp_path, output_dir=str(tmp_path / "second")), backend, JOB_NAME)
    assert spec.resume is not None
    assert spec.resume.job_id == JOB_NAME and spec.resume.checkpoint_dir.rstrip("/") == str(old)
    assert backend.render(spec, fake_package)["resume_from"] == spec.resume.checkpoint_dir
    status = backend.submit(spec, fake_package).wait()
    assert status.state is JobState.SUCCEEDED
    copied = tmp_path / "second" / "checkpoints" / "ckpt-40" / "ckpt.index"
    assert copied.read_text() == "stands for the trainer's files"
    assert status.details["saved"] == {
        "step": 40,
        "checkpoint": str(copied.parent / "ckpt"),
        "source": "last periodic checkpoint",
    }
    assert (old / "ckpt-40" / "ckpt.index").is_file()  # the continued run is left as it was

    third = resumed(make_spec(tmp_path, output_dir=str(tmp_path / "third")), backend, JOB_NAME)
    assert third.resume is not None
    gone = replace(third, resume=replace(third.resume, checkpoint_dir=str(tmp_path / "nowhere")))
    with pytest.raises(UsageError, match="no local checkpoint folder"):
        backend.submit(gone, fake_package)
