"""One contract, every backend: what a user relies on whichever backend runs the job (tests/backends/test_contract.py),
for another distribution's backend to run on itself with a ``leg`` fixture returning a :class:`Leg` (the backend on its
fake and how to script its next job); see docs/how-to/add-a-backend.md."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from cloudtrain.app.reattach import reattach_command
from cloudtrain.backends import get_backend, names, parse_job_id
from cloudtrain.backends.base import JobState
from cloudtrain.cli import main
from cloudtrain.errors import ExitCode
from cloudtrain.following.setup_lines import CLOUDTRAIN_REPLICA, LAUNCHER_PREFIX
from cloudtrain.history import JobRecord, history_file, record
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec, MachineSpec, PackageSpec

#: The lines a succeeding job prints (``Leg.succeed``); each must reach the user exactly once.
LINES = ["epoch 1 loss 0.5", "epoch 2 loss 0.25", "done"]


@dataclass
class Leg:
    """A backend on its fake, and how to script the next job there."""

    backend: Any
    spec: Any
    package: Any
    succeed: Callable[[list[str]], None]  # the next job runs, prints these lines, succeeds
    keep_running: Callable[[], None]  # the next job runs until cancelled
    full_name: Callable[[Any], str]  # a handle's full job name, as users paste it
    #: the id a full name stands for (``attach`` takes it): the short id, or a local run's folder
    id_of_full_name: Callable[[Any], str] = lambda handle: handle.job_id


def sample_spec(**changes: Any) -> JobSpec:
    """A resolved job spec (2 replicas of 4×T4, ``trainer.task``), with ``changes`` replaced."""
    spec = JobSpec(
        name="demo",
        job_name="demo-20240501-120000",
        backend="vertex",
        cloud="vertex",
        region="us-central1",
        project="my-project",
        staging_bucket="gs://my-bucket",
        machine=MachineSpec(
            type="n1-standard-16",
            accelerator="NVIDIA_TESLA_T4",
            accelerator_count=4,
            gpu_model="T4",
            disk_gb=100,
            price_per_hour=2.16,
            price_region="us-central1",
            price_date="2024-05-01",
        ),
        replica_count=2,
        package=PackageSpec(
            path=Path("/src/trainer"), module="trainer.task", requirements=(), name=None, version="0.1"
        ),
        args=("--epochs=10",),
        hyperparameters=MappingProxyType({"learning_rate": 0.001, "mixed_precision": True}),
        image_uri="us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-17.py310:latest",
        tensorflow_version="2.17",
        output_dir="gs://my-bucket/cloudtrain/outputs/demo-20240501-120000",
        spot=False,
        max_wait_seconds=None,
        max_runtime_seconds=86400,
        labels=MappingProxyType({"team": "vision"}),
        env=MappingProxyType({"TF_CPP_MIN_LOG_LEVEL": "1"}),
        config_file=Path("/src/job_configs/gpu4.yaml"),
        created=dt.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=dt.timezone.utc),
    )
    return dataclasses.replace(spec, **changes)


def sample_package(folder: Path, content: bytes = b"not really a tarball\n" * 100) -> BuiltPackage:
    """A built package (a file of ``content`` in ``folder``), for a backend that only uploads or names it."""
    sha = hashlib.sha256(content).hexdigest()
    path = Path(folder) / f"trainer-0.1-{sha[:12]}.tar.gz"
    path.write_bytes(content)
    return BuiltPackage(
        path=path,
        sha256=sha,
        size=len(content),
        name="trainer",
        version="0.1",
        filename=path.name,
        files=(),
        warnings=(),
    )


@pytest.fixture(autouse=True)
def contract_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """cloudtrain's cache and job history in a folder of the test's own, never the user's."""
    folder = tmp_path_factory.mktemp("cloudtrain-cache")
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(folder))
    return folder


def test_every_leg_is_a_registered_backend(leg: Leg) -> None:
    assert leg.backend.name in names()
    assert get_backend(leg.backend.name) is leg.backend


def test_render_is_pure_json_and_the_same_twice(leg: Leg) -> None:
    first = leg.backend.render(leg.spec, leg.package)
    assert json.loads(json.dumps(first)) == first == leg.backend.render(leg.spec, leg.package)


def test_a_job_prints_each_line_once_and_ends_with_the_tables_exit_code(leg: Leg) -> None:
    leg.succeed(LINES)
    handle = leg.backend.submit(leg.spec, leg.package)
    own = [line.message for line in handle.logs(follow=True) if not _cloudtrains(line)]
    assert own == LINES  # cloudtrain's own notices (a local run's set-up line, a launcher's) aside
    final = handle.wait()
    assert final.state is JobState.SUCCEEDED and final.state.exit_code == ExitCode.OK
    assert final.job_id == handle.job_id


def _cloudtrains(line: Any) -> bool:
    """A notice of cloudtrain's own: a local run's (its own replica) or a launcher's on the nodes (a
    Slurm task's ``cloudtrain: task 0 (chief) on node1``), as :mod:`cloudtrain.following.setup_lines` tells them."""
    return bool(line.replica == CLOUDTRAIN_REPLICA or line.message.startswith(LAUNCHER_PREFIX))


def test_cancel_stops_the_job_and_exits_130(leg: Leg) -> None:
    leg.keep_running()
    handle = leg.backend.submit(leg.spec, leg.package)
    assert handle.status().state in (JobState.PENDING, JobState.RUNNING)
    handle.cancel()
    final = handle.wait()
    assert final.state is JobState.CANCELLED and final.state.exit_code == ExitCode.INTERRUPTED
    assert int(ExitCode.INTERRUPTED) == 130


def test_the_full_name_finds_the_backend_and_its_location(leg: Leg) -> None:
    leg.keep_running()
    handle = leg.backend.submit(leg.spec, leg.package)
    parsed = parse_job_id(leg.full_name(handle))
    assert parsed is not None
    found, job_id, location = parsed
    assert (found, job_id) == (leg.backend.name, leg.id_of_full_name(handle))
    assert location == dict(handle.location) and set(location) == set(leg.backend.facts.location_keys)
    assert leg.backend.attach(job_id, **location).status().job_id == handle.job_id


def _record(leg: Leg, handle: Any) -> None:
    location = dict(handle.location)
    record(
        JobRecord(
            handle.job_id, leg.full_name(handle), leg.backend.name, location.get("region", ""), location.get("project")
        )
    )


def test_reattach_by_full_name_with_no_flags_prints_each_line_once(
    leg: Leg, capsys: pytest.CaptureFixture[str]
) -> None:
    """A job submitted as ``submit --detach`` does (nobody here follows it), followed by its full name."""
    leg.succeed(LINES)
    handle = leg.backend.submit_detached(leg.spec, leg.package)
    assert main(["logs", leg.full_name(handle), "--follow"]) == ExitCode.OK
    out = capsys.readouterr().out
    assert [n for line in LINES if (n := out.count(line)) != 1] == []


def test_the_detach_hint_reattaches_from_history_and_prints_each_line_once(
    leg: Leg, capsys: pytest.CaptureFixture[str]
) -> None:
    """``submit --detach``'s ``reattach_command``, later, with only this machine's history, follows the job."""
    leg.succeed(LINES)
    handle = leg.backend.submit_detached(leg.spec, leg.package)
    _record(leg, handle)
    command = shlex.split(reattach_command(handle))
    del handle  # detached: nothing of the submit is kept
    assert command[:2] == ["cloudtrain", "logs"] and "--follow" in command
    assert main(command[1:]) == ExitCode.OK
    out = capsys.readouterr().out
    assert [n for line in LINES if (n := out.count(line)) != 1] == []


def test_history_list_and_status_find_the_job_by_its_short_id(leg: Leg, capsys: pytest.CaptureFixture[str]) -> None:
    leg.keep_running()
    handle = leg.backend.submit(leg.spec, leg.package)
    _record(leg, handle)
    assert main(["list", "-o", "json"]) == ExitCode.OK
    listed = json.loads(capsys.readouterr().out)
    assert [(j["job_id"], j["backend"]) for j in listed] == [(handle.job_id, leg.backend.name)]
    assert main(["status", handle.job_id, "-o", "json"]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["job_id"] == handle.job_id


def test_a_damaged_history_line_is_one_warning_and_the_job_is_still_found(
    leg: Leg, capsys: pytest.CaptureFixture[str]
) -> None:
    leg.keep_running()
    handle = leg.backend.submit(leg.spec, leg.package)
    history_file().parent.mkdir(parents=True, exist_ok=True)
    history_file().write_text('{"job_id": "half a line\n')
    _record(leg, handle)
    assert main(["list", "-o", "json"]) == ExitCode.OK
    captured = capsys.readouterr()
    assert [j["job_id"] for j in json.loads(captured.out)] == [handle.job_id]
    assert captured.err.count("warning") == 1 and str(history_file()) in captured.err


def test_an_unknown_job_is_bad_input_exit_2(leg: Leg, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "no-such-job-anywhere"]) == ExitCode.BAD_INPUT
    assert "no-such-job-anywhere" in capsys.readouterr().err


__all__ = [
    "LINES",
    "Leg",
    "contract_cache",
    "sample_package",
    "sample_spec",
    "test_a_damaged_history_line_is_one_warning_and_the_job_is_still_found",
    "test_a_job_prints_each_line_once_and_ends_with_the_tables_exit_code",
    "test_an_unknown_job_is_bad_input_exit_2",
    "test_cancel_stops_the_job_and_exits_130",
    "test_every_leg_is_a_registered_backend",
    "test_history_list_and_status_find_the_job_by_its_short_id",
    "test_reattach_by_full_name_with_no_flags_prints_each_line_once",
    "test_render_is_pure_json_and_the_same_twice",
    "test_the_detach_hint_reattaches_from_history_and_prints_each_line_once",
    "test_the_full_name_finds_the_backend_and_its_location",
]
