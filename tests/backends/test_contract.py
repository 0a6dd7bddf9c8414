"""One contract, every backend: what a user relies on whichever backend runs the job.

The tests are cloudtrain.testing.contract's, the suite a backend of another distribution runs on
itself (tests/backends/test_plugin.py runs it on the example backend installed as one).

Each leg gives a backend on its fake (the example backend's in-process engine; Vertex on the
fake JobService, Cloud Logging and the GCS emulator over 127.0.0.1, on a virtual clock;
SageMaker on the moto server over 127.0.0.1, on a virtual clock; the local backend running a
small package from tests/packages/ without TensorFlow) and says how to script a job there. The
tests then use only the interface and the CLI. Slurm's leg runs on the real test cluster, with the
cluster's fixtures: tests/slurm/test_contract.py.
"""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import pytest

from cloudtrain.testing.contract import *  # noqa: F403 - the contract's tests, run on each leg below
from cloudtrain.testing.contract import Leg, sample_package, sample_spec
from tests.backends.vertex.conftest import backend, clock, gcs, jobs, logging_fake, make_package, make_spec  # noqa: F401

ECHO_LINES = Path(__file__).resolve().parents[1] / "packages" / "echo_lines"


def _example_leg(monkeypatch, tmp_path) -> Leg:
    from tests.backends import example

    monkeypatch.setattr(example, "ENGINE", example.Engine())

    def succeed(lines):
        example.ENGINE.next_script = (["PENDING", "RUNNING", "RUNNING", "SUCCEEDED"], lines)

    def keep_running():
        example.ENGINE.next_script = (["PENDING", "RUNNING"], [])

    return Leg(
        example.BACKEND,
        sample_spec(),
        sample_package(tmp_path),
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
