"""Replica processes with a tiny fake package: live merged logs, failure, cancel, no orphans."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from types import MappingProxyType

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.backends.local.backend import LocalBackend
from cloudtrain.backends.local.processes import NOTICE
from cloudtrain.spec import DataChannel

from .conftest import make_spec, pid_alive


@pytest.fixture
def backend(no_tf):
    return no_tf(stop_grace_s=2.0)


def _pids(folder: Path, names: list[str], timeout: float = 60) -> list[int]:
    """Each replica's pid and its grandchild's, once every replica has written them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all((folder / n).is_file() and (folder / n).read_text().strip() for n in names):
            return [int(pid) for n in names for pid in (folder / n).read_text().split()]
        time.sleep(0.05)
    raise AssertionError(f"replicas did not start: {sorted(p.name for p in folder.iterdir())}")


def _gone(pids: list[int], timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.05)
    return not any(pid_alive(p) for p in pids)


def test_two_vertex_replicas_succeed_with_merged_logs_and_a_summary(backend, fake_package, tmp_path):
    spec = make_spec(tmp_path, replica_count=2, args=("--flag",), hyperparameters={"epochs": 2})
    job = backend.submit(spec, fake_package)
    lines = list(job.logs(follow=True))
    status = job.wait()

    assert status.state is JobState.SUCCEEDED and status.native_state == "succeeded"
    by_replica: dict[str, list[str]] = {}
    for line in lines:
        by_replica.setdefault(line.replica, []).append(line.message)
    assert set(by_replica) == {"chief", "worker-0", NOTICE}
    assert "hello from chief args=['--flag', '--epochs=2']" in by_replica["chief"]
    assert "to stderr" in by_replica["worker-0"]  # stderr is merged in
    contract_keys = next(m for m in by_replica["worker-0"] if m.startswith("contract ")).split()[1:]
    assert contract_keys == [
        "AIP_CHECKPOINT_DIR",
        "AIP_MODEL_DIR",
        "AIP_TENSORBOARD_LOG_DIR",
        "CLOUD_ML_JOB_ID",
        "CLUSTER_SPEC",
        "TF_CONFIG",
    ]

    out = tmp_path / "out"
    d = status.details
    assert d["exit_codes"] == {"chief": 0, "worker-0": 0} and d["exit_code"] == 0
    assert d["metrics"] == {"loss": 0.5, "accuracy": 0.6, "wall_time_s": 0.1}
    assert d["model_dir"] == f"{out}/model/" and d["checkpoint_dir"] == f"{out}/checkpoints/"
    assert d["tensorboard_dir"] == f"{out}/logs/"
    assert d["metrics_file"] == f"{out}/model/metrics.json"
    assert d["wall_time_s"] > 0 and d["environment_cached"] in (True, False)
    assert "hello from worker-0" in (out / "local-run" / "worker-0.log").read_text()
    recorded = json.loads((out / "local-run" / "status.json").read_text())
    assert recorded["state"] == "SUCCEEDED" and recorded["details"]["exit_codes"] == d["exit_codes"]
    tf_config = json.loads(json.loads((out / "local-run" / "replicas.json").read_text())[1]["env"]["TF_CONFIG"])
    assert tf_config["task"] == {"type": "worker", "index": 0}
    assert all(a.startswith("127.0.0.1:") and int(a.split(":")[1]) > 0 for a in tf_config["cluster"]["worker"])


def test_one_failing_replica_stops_the_others_and_leaves_no_orphan(backend, fake_package, tmp_path):
    pids_dir = tmp_path / "pids"
    pids_dir.mkdir()
    env = {
        "FAKE_PLAN": json.dumps({"chief": "hang", "worker-0": "hang", "worker-1": "fail:3"}),
        "FAKE_PIDS": str(pids_dir),
        "FAKE_FAIL_AFTER_PIDS": "3",
    }
    job = backend.submit(make_spec(tmp_path, replica_count=3, env=env), fake_package)
    pids = _pids(pids_dir, ["chief", "worker-0", "worker-1"])
    status = job.wait()

    assert status.state is JobState.FAILED
    # the replica's own code is in the message and exit_codes; the job's exit code is 1 (errors.ExitCode)
    assert status.details["failed_replica"] == "worker-1" and status.details["exit_code"] == 1
    assert status.message == "replica worker-1 exited with code 3"
    codes = status.details["exit_codes"]
    assert codes["worker-1"] == 3 and codes["chief"] < 0 and codes["worker-0"] < 0  # stopped by a signal
    assert _gone(pids), "replicas or their children outlived the job"
    notices = [line.message for line in job.logs() if line.replica == NOTICE]
    assert "replica worker-1 exited with code 3; stopping the others" in notices
    recorded = [
        line for line in LocalBackend().attach(str(tmp_path / "out"), region="").logs() if line.replica == NOTICE
    ]
    assert "replica worker-1 exited with code 3; stopping the others" in [line.message for line in recorded]
    assert {line.severity for line in recorded} >= {"INFO", "ERROR"}


def test_one_replica_that_fails_has_no_others_to_stop(backend, fake_package, tmp_path):
    job = backend.submit(make_spec(tmp_path, env={"FAKE_PLAN": json.dumps({"chief": "fail:3"})}), fake_package)
    assert job.wait().state is JobState.FAILED
    notices = [line.message for line in job.logs() if line.replica == NOTICE]
    assert "replica chief exited with code 3" in notices
    assert not any("the others" in m for m in notices), notices


def test_cancel_stops_every_replica_and_its_children(backend, fake_package, tmp_path):
    pids_dir = tmp_path / "pids"
    pids_dir.mkdir()
    env = {"FAKE_PLAN": json.dumps({"algo-1": "hang", "algo-2": "hang"}), "FAKE_PIDS": str(pids_dir)}
    job = backend.submit(make_spec(tmp_path, cloud="sagemaker", replica_count=2, env=env), fake_package)
    pids = _pids(pids_dir, ["algo-1", "algo-2"])
    assert job.status().state is JobState.RUNNING
    started = time.monotonic()
    status = job.cancel()

    assert status.state is JobState.CANCELLED and status.details["exit_code"] == 130
    assert time.monotonic() - started < 10
    assert _gone(pids), "replicas or their children outlived the job"
    assert job.wait() is status and job.cancel() is status  # terminal: stays put


def test_sagemaker_single_host_runs_in_its_opt_ml_tree(backend, fake_package, tmp_path):
    job = backend.submit(make_spec(tmp_path, cloud="sagemaker", hyperparameters={"epochs": 1}), fake_package)
    status = job.wait()
    out = tmp_path / "out" / "algo-1"
    assert status.state is JobState.SUCCEEDED
    assert status.details["model_dir"] == f"{out}/model"
    assert status.details["checkpoint_dir"] == f"{out}/checkpoints"
    assert (out / "input" / "config" / "hyperparameters.json").is_file()
    assert (out / "model" / "metrics.json").is_file()
    messages = [line.message for line in job.logs() if line.replica == "algo-1"]
    assert "hello from algo-1 args=['--epochs=1']" in messages


def test_max_runtime_stops_the_job(backend, fake_package, tmp_path):
    env = {"FAKE_PLAN": json.dumps({"chief": "hang"})}
    job = backend.submit(make_spec(tmp_path, env=env, max_runtime=1), fake_package)
    status = job.wait()
    assert status.state is JobState.TIMED_OUT and status.native_state == "timed_out"
    assert status.details["exit_code"] == 124


def test_inherited_contract_variables_do_not_leak(no_tf, fake_package, tmp_path):
    polluted = {
        "PATH": "/usr/bin:/bin",
        "TF_CONFIG": '{"cluster": {}}',
        "SM_MODEL_DIR": "/elsewhere",
        "AIP_MODEL_DIR": "/elsewhere",
        "PYTHONPATH": "/work/main",
    }
    backend = no_tf(environ=polluted)
    job = backend.submit(make_spec(tmp_path), fake_package)
    assert job.wait().state is JobState.SUCCEEDED
    line = next(m.message for m in job.logs() if m.message.startswith("contract "))
    assert line.split()[1:] == ["AIP_CHECKPOINT_DIR", "AIP_MODEL_DIR", "AIP_TENSORBOARD_LOG_DIR", "CLOUD_ML_JOB_ID"]


def test_render_is_json_and_starts_nothing(no_tf, fake_package, tmp_path):
    backend = no_tf(cache_root=tmp_path / "untouched")
    rendered = backend.render(make_spec(tmp_path, replica_count=2), fake_package)
    json.dumps(rendered)
    assert [r["name"] for r in rendered["replicas"]] == ["chief", "worker-0"]
    assert rendered["replicas"][0]["argv"][1:3] == ["-m", "fakepkg.task"]
    assert not (tmp_path / "untouched").exists() and not (tmp_path / "out").exists()


def test_render_says_how_each_channel_reaches_the_run(no_tf, fake_package, tmp_path):
    """A local folder is linked; a bucket is downloaded once into the cache (a render fetches nothing)."""
    channels = {"train": DataChannel("train", str(tmp_path / "data")), "test": DataChannel("test", "gs://b/test")}
    spec = dataclasses.replace(make_spec(tmp_path), channels=MappingProxyType(channels))
    rendered = no_tf(cache_root=tmp_path / "untouched").render(spec, fake_package)
    assert rendered["data"] == {
        "train": f"{tmp_path / 'data'} (linked)",
        "test": "gs://b/test (downloaded once into the cache)",
    }
    assert "data" not in no_tf().render(make_spec(tmp_path), fake_package)
    assert not (tmp_path / "untouched").exists()


def test_a_bucket_output_dir_falls_back_to_a_local_folder(backend, fake_package, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    job = backend.submit(make_spec(tmp_path, output_dir="gs://bucket/out"), fake_package)
    status = job.wait()
    assert status.details["output_dir"] == str(tmp_path / "cloudtrain-runs" / job.job_id)
    notices = [line for line in job.logs() if line.replica == NOTICE]
    assert any("is a bucket" in line.message and line.severity == "WARNING" for line in notices)
    assert backend.attach(job.job_id, region="us-central1").status().state is JobState.SUCCEEDED
    assert [s.job_id for s in backend.list_jobs(region="us-central1")] == [job.job_id]


def test_a_trainer_writing_to_opt_ml_is_reported(backend, fake_package, tmp_path, monkeypatch):
    from cloudtrain.backends.environment import MachineRoot
    from cloudtrain.backends.sagemaker.contract import CONTRACT

    fake_root = tmp_path / "opt-ml"
    monkeypatch.setattr(CONTRACT, "machine_root", MachineRoot(str(fake_root), "SAGEMAKER_BASE_DIR"))
    spec = make_spec(tmp_path, cloud="sagemaker", env={"FAKE_WRITE": str(fake_root / "checkpoints")})
    status = backend.submit(spec, fake_package).wait()
    assert status.state is JobState.SUCCEEDED
    (warning,) = status.details["warnings"]
    assert f"wrote to {fake_root}" in warning and "SAGEMAKER_BASE_DIR" in warning


def test_a_replica_that_cannot_start_is_one_clear_error(tmp_path):
    from cloudtrain.backends.local.processes import Launch, ReplicaGroup
    from cloudtrain.errors import BackendError

    ok = Launch("chief", ["sleep", "30"], {"PATH": "/usr/bin:/bin"}, str(tmp_path), tmp_path / "chief.log")
    bad = Launch("worker-0", [str(tmp_path / "missing-python")], {}, str(tmp_path), tmp_path / "worker-0.log")
    group = ReplicaGroup([ok, bad])
    with pytest.raises(BackendError, match="cannot start replica worker-0"):
        group.start()
    assert not pid_alive(group.pids["chief"])  # the replica that did start was stopped


@pytest.mark.parametrize("name", ["chief.log", "lines.jsonl"])
def test_a_run_folder_whose_log_is_a_link_is_refused_before_a_replica_starts(backend, fake_package, tmp_path, name):
    """A reused output folder whose chief.log or lines.jsonl is a link: refused in one line (exit 2) — the folder
    holds another run's record (issue 40), and were it claimed, the link is never opened (issue 41's
    StateError, tests/test_hostile_input.py) — no replica started, the link's target unchanged (it was
    appended to)."""
    from cloudtrain.errors import UsageError

    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    run_dir = tmp_path / "out" / "local-run"
    run_dir.mkdir(parents=True)
    (run_dir / name).symlink_to(precious)
    with pytest.raises(UsageError, match="already holds the record of run"):
        backend.submit(make_spec(tmp_path), fake_package)
    assert precious.read_text() == "keep me\n"
    assert not (run_dir / "status.json").exists()
