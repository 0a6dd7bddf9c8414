"""One contract, every backend: what a user relies on whichever backend runs the job.

Each leg gives a backend on its fake (the example backend's in-process engine; Vertex on the
fake JobService, Cloud Logging and the GCS emulator over 127.0.0.1, on a virtual clock;
SageMaker on the moto server over 127.0.0.1, on a virtual clock; the local backend running a
small package from tests/packages/ without TensorFlow) and says how to script a job there. The
tests then use only the interface and the CLI.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cloudtrain.app.reattach import reattach_command
from cloudtrain.backends import get_backend, names, parse_job_id
from cloudtrain.backends.base import JobState
from cloudtrain.cli import main
from cloudtrain.errors import ExitCode
from cloudtrain.history import JobRecord, history_file, record
from cloudtrain.setup_output import CLOUDTRAIN_REPLICA
from tests.backends.vertex.conftest import backend, clock, gcs, jobs, logging_fake, make_package, make_spec  # noqa: F401

LINES = ["epoch 1 loss 0.5", "epoch 2 loss 0.25", "done"]
ECHO_LINES = Path(__file__).resolve().parents[1] / "packages" / "echo_lines"


@dataclass
class Leg:
    backend: Any
    spec: Any
    package: Any
    succeed: Callable[[list[str]], None]  # the next job runs, prints these lines, succeeds
    keep_running: Callable[[], None]  # the next job runs until cancelled
    full_name: Callable[[Any], str]  # a handle's full job name, as users paste it
    #: the id a full name stands for (``attach`` takes it): the short id, or a local run's folder
    id_of_full_name: Callable[[Any], str] = lambda handle: handle.job_id


def _example_leg(monkeypatch, tmp_path) -> Leg:
    from tests.backends import example

    monkeypatch.setattr(example, "ENGINE", example.Engine())

    def succeed(lines):
        example.ENGINE.next_script = (["PENDING", "RUNNING", "RUNNING", "SUCCEEDED"], lines)

    def keep_running():
        example.ENGINE.next_script = (["PENDING", "RUNNING"], [])

    return Leg(
        example.BACKEND,
        make_spec(),
        make_package(tmp_path),
        succeed,
        keep_running,
        lambda handle: f"example:{handle.job_id}",
    )


def _vertex_leg(request, monkeypatch, tmp_path) -> Leg:
    from tests.fakes.vertex_jobs import Script

    vertex, fake_jobs, logs, clock_ = (request.getfixturevalue(n) for n in ("backend", "jobs", "logging_fake", "clock"))
    request.getfixturevalue("gcs")
    monkeypatch.setattr(importlib.import_module("cloudtrain.backends.vertex"), "BACKEND", vertex)

    def succeed(lines):
        fake_jobs.scripts.append(Script(states=["PENDING", "RUNNING", "RUNNING", "SUCCEEDED"]))
        job_id = str(1000 + len(fake_jobs.jobs))  # the fake numbers jobs from 1000
        for n, message in enumerate(lines):
            logs.add(job_id, "workerpool0-0", message, at=clock_.time() + 1 + n)

    def keep_running():
        fake_jobs.scripts.append(Script(states=["PENDING", "RUNNING"]))

    return Leg(vertex, make_spec(), make_package(tmp_path), succeed, keep_running, lambda handle: handle.name)


class VirtualClock:
    """Time that passes only when someone sleeps: a follower's waits cost nothing."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)


def _moto_jobs_as_scripted(monkeypatch, hold: list[bool]) -> None:
    """moto marks a new training job Completed at once and has no StopTrainingJob: while ``hold[0]``,
    a new job stays InProgress (Training); StopTrainingJob stops it, as SageMaker's does."""
    from moto.core.responses import EmptyResult
    from moto.sagemaker.models import SageMakerModelBackend
    from moto.sagemaker.responses import SageMakerResponse

    create = SageMakerModelBackend.create_training_job

    def create_held(self, training_job_name, *args, **kwargs):
        created = create(self, training_job_name, *args, **kwargs)
        if hold[0]:
            job = self.training_jobs[training_job_name]
            job.training_job_status, job.secondary_status = "InProgress", "Training"
        return created

    def stop(self):
        job = self.sagemaker_backend.training_jobs[self._get_param("TrainingJobName")]
        job.training_job_status, job.secondary_status = "Stopped", "Stopped"
        return EmptyResult()

    monkeypatch.setattr(SageMakerModelBackend, "create_training_job", create_held)
    monkeypatch.setattr(SageMakerResponse, "stop_training_job", stop, raising=False)


def _sagemaker_leg(request, monkeypatch, tmp_path) -> Leg:
    from cloudtrain.backends.sagemaker import SageMakerBackend
    from cloudtrain.packaging import build_sdist
    from tests.backends.sagemaker.conftest import make_spec as sagemaker_spec
    from tests.fakes.aws import LogWriter

    aws = request.getfixturevalue("aws")
    spec = sagemaker_spec()
    aws.client("s3", spec.region).create_bucket(Bucket=(spec.staging_bucket or "").removeprefix("s3://"))
    virtual = VirtualClock()
    sagemaker = SageMakerBackend(sleep=virtual.sleep, clock=virtual.time, tailer_options={"live_tail": False})
    monkeypatch.setattr(importlib.import_module("cloudtrain.backends.sagemaker"), "BACKEND", sagemaker)
    hold = [False]
    _moto_jobs_as_scripted(monkeypatch, hold)

    def succeed(lines):
        writer = LogWriter(aws.client("logs", spec.region), spec.job_name)
        writer.write(writer.open(1), lines)

    def keep_running():
        hold[0] = True

    package = build_sdist(ECHO_LINES, tmp_path / "dist", name="echo_lines", version="0.1")
    return Leg(sagemaker, spec, package, succeed, keep_running, lambda handle: handle.status().name)


@pytest.fixture(scope="session")
def local_env_cache(tmp_path_factory) -> Path:
    """One environment cache for the local leg: the package's env is built once, not per test."""
    return tmp_path_factory.mktemp("contract-local-envs")


def _local_leg(request, monkeypatch, tmp_path) -> Leg:
    from cloudtrain.backends.local.backend import LocalBackend
    from cloudtrain.packaging import build_sdist
    from tests.backends.local.conftest import bare_image
    from tests.backends.local.conftest import make_spec as local_spec

    cache = request.getfixturevalue("local_env_cache")
    local = LocalBackend(
        cache_root=cache, gpu_count=lambda: 0, image_for=lambda spec: bare_image(), log=lambda m: None, stop_grace_s=5
    )
    monkeypatch.setattr(importlib.import_module("cloudtrain.backends.local.backend"), "BACKEND", local)
    package = build_sdist(ECHO_LINES, cache / "dist", name="echo_lines", version="0.1")

    def succeed(lines):
        local_leg.spec = dataclasses.replace(local_leg.spec, args=tuple(a for line in lines for a in ("--line", line)))

    def keep_running():
        local_leg.spec = dataclasses.replace(local_leg.spec, args=("--hold",))

    local_leg = Leg(
        local,
        local_spec(tmp_path, module="echo_lines.task"),
        package,
        succeed,
        keep_running,
        lambda handle: str(handle.output_dir),
        lambda handle: str(handle.output_dir),
    )
    return local_leg


LEGS = {"vertex": _vertex_leg, "sagemaker": _sagemaker_leg, "local": _local_leg}  # on a server or a process


@pytest.fixture(
    params=[
        "example",
        pytest.param("vertex", marks=pytest.mark.server),
        pytest.param("sagemaker", marks=pytest.mark.server),
        pytest.param("local", marks=pytest.mark.slow),
    ]
)
def leg(request, monkeypatch, tmp_path) -> Leg:
    if request.param == "example":
        return _example_leg(monkeypatch, tmp_path)
    return LEGS[request.param](request, monkeypatch, tmp_path)


def test_every_leg_is_a_registered_backend(leg: Leg) -> None:
    assert leg.backend.name in names()
    assert get_backend(leg.backend.name) is leg.backend


def test_render_is_pure_json_and_the_same_twice(leg: Leg) -> None:
    first = leg.backend.render(leg.spec, leg.package)
    assert json.loads(json.dumps(first)) == first == leg.backend.render(leg.spec, leg.package)


def test_a_job_prints_each_line_once_and_ends_with_the_tables_exit_code(leg: Leg) -> None:
    leg.succeed(LINES)
    handle = leg.backend.submit(leg.spec, leg.package)
    own = [line.message for line in handle.logs(follow=True) if line.replica != CLOUDTRAIN_REPLICA]
    assert own == LINES  # cloudtrain's own notices (a local run's set-up line) aside
    final = handle.wait()
    assert final.state is JobState.SUCCEEDED and final.state.exit_code == ExitCode.OK
    assert final.job_id == handle.job_id


def test_cancel_stops_the_job_and_exits_130(leg: Leg) -> None:
    leg.keep_running()
    handle = leg.backend.submit(leg.spec, leg.package)
    assert handle.status().state in (JobState.PENDING, JobState.RUNNING)
    handle.cancel()
    final = handle.wait()
    assert final.state is JobState.CANCELLED and final.state.exit_code == ExitCode.INTERRUPTED == 130


def test_the_full_name_finds_the_backend_and_its_location(leg: Leg) -> None:
    leg.keep_running()
    handle = leg.backend.submit(leg.spec, leg.package)
    parsed = parse_job_id(leg.full_name(handle))
    assert parsed is not None
    found, job_id, location = parsed
    assert (found, job_id) == (leg.backend.name, leg.id_of_full_name(handle))
    assert location == dict(handle.location) and set(location) == set(leg.backend.location_keys)
    assert leg.backend.attach(job_id, **location).status().job_id == handle.job_id


def _record(leg: Leg, handle) -> None:
    location = dict(handle.location)
    record(
        JobRecord(
            handle.job_id, leg.full_name(handle), leg.backend.name, location.get("region", ""), location.get("project")
        )
    )


def test_reattach_by_full_name_with_no_flags_prints_each_line_once(leg: Leg, capsys) -> None:
    """A job submitted as ``submit --detach`` does (nobody here follows it), followed by its full name."""
    leg.succeed(LINES)
    handle = leg.backend.submit_detached(leg.spec, leg.package)
    assert main(["logs", leg.full_name(handle), "--follow"]) == ExitCode.OK
    out = capsys.readouterr().out
    assert [n for line in LINES if (n := out.count(line)) != 1] == []


def test_the_detach_hint_reattaches_from_history_and_prints_each_line_once(leg: Leg, capsys) -> None:
    """``submit --detach`` records the job and prints ``reattach_command``; that command, run later
    with nothing but this machine's history, follows the job to its end."""
    leg.succeed(LINES)
    handle = leg.backend.submit_detached(leg.spec, leg.package)
    _record(leg, handle)
    command = shlex.split(reattach_command(handle))
    del handle  # detached: nothing of the submit is kept
    assert command[:2] == ["cloudtrain", "logs"] and "--follow" in command
    assert main(command[1:]) == ExitCode.OK
    out = capsys.readouterr().out
    assert [n for line in LINES if (n := out.count(line)) != 1] == []


def test_history_list_and_status_find_the_job_by_its_short_id(leg: Leg, capsys) -> None:
    leg.keep_running()
    handle = leg.backend.submit(leg.spec, leg.package)
    _record(leg, handle)
    assert main(["list", "-o", "json"]) == ExitCode.OK
    listed = json.loads(capsys.readouterr().out)
    assert [(j["job_id"], j["backend"]) for j in listed] == [(handle.job_id, leg.backend.name)]
    assert main(["status", handle.job_id, "-o", "json"]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["job_id"] == handle.job_id


def test_a_damaged_history_line_is_one_warning_and_the_job_is_still_found(leg: Leg, capsys) -> None:
    leg.keep_running()
    handle = leg.backend.submit(leg.spec, leg.package)
    history_file().parent.mkdir(parents=True, exist_ok=True)
    history_file().write_text('{"job_id": "half a line\n')
    _record(leg, handle)
    assert main(["list", "-o", "json"]) == ExitCode.OK
    captured = capsys.readouterr()
    assert [j["job_id"] for j in json.loads(captured.out)] == [handle.job_id]
    assert captured.err.count("warning") == 1 and str(history_file()) in captured.err


def test_an_unknown_job_is_bad_input_exit_2(leg: Leg, capsys) -> None:
    assert main(["status", "no-such-job-anywhere"]) == ExitCode.BAD_INPUT
    assert "no-such-job-anywhere" in capsys.readouterr().err
