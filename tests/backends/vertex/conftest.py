"""Fixtures for the Vertex backend: a JobSpec, a package, the fakes, the GCS emulator, the backend."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from cloudtrain.backends.vertex import VertexBackend
from cloudtrain.backends.vertex.logs import TailPolicy
from cloudtrain.backends.vertex.retry import api_backoff
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec
from cloudtrain.testing.contract import sample_spec
from tests.fakes import VirtualClock

CREATED = dt.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=dt.timezone.utc)


def make_spec(**changes) -> JobSpec:
    """A 4×T4, 2-replica Vertex job spec, as build_spec would resolve it: the contract suite's sample."""
    return sample_spec(**changes)


def make_package(tmp_path: Path, content: bytes = b"not really a tarball\n" * 100) -> BuiltPackage:
    import hashlib

    sha = hashlib.sha256(content).hexdigest()
    path = tmp_path / f"trainer-0.1-{sha[:12]}.tar.gz"
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


@pytest.fixture
def spec() -> JobSpec:
    return make_spec()


@pytest.fixture
def package(tmp_path) -> BuiltPackage:
    return make_package(tmp_path)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(start=CREATED.timestamp() + 1)


@pytest.fixture
def jobs(clock):
    from tests.fakes.vertex_jobs import FakeJobService

    fake = FakeJobService(clock)
    yield fake
    fake.stop()


@pytest.fixture
def logging_fake(clock):
    """Cloud Logging on the virtual clock, answering UNIMPLEMENTED to TailLogEntries: the
    follower polls alone, deterministically (a streaming tail needs real time: see test_tail.py)."""
    from tests.fakes.cloud_logging import FakeLogging

    fake = FakeLogging(clock, tail_mode="unimplemented")
    yield fake
    fake.stop()


@pytest.fixture
def gcs(monkeypatch):
    """gcp-storage-emulator on a free port, holding the bucket ``my-bucket``; always stopped."""
    from tests.fakes.gcs import gcs_emulator

    with gcs_emulator("my-bucket") as host:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", host)
        from cloudtrain.backends.vertex.upload import storage_client

        yield storage_client("my-project", None)


class EchoKeeping(VertexBackend):
    """The real backend, keeping the lines it echoes (its uploads) for the tests to read."""

    def __init__(self, **options: Any):
        self.echoed: list[str] = []
        super().__init__(echo=self.echoed.append, **options)


@pytest.fixture
def backend(jobs, logging_fake, clock, monkeypatch) -> EchoKeeping:
    """The real backend, its endpoints on the fakes, its clock virtual, echo recorded."""
    monkeypatch.setenv("CLOUDTRAIN_VERTEX_ENDPOINT", jobs.address)
    monkeypatch.setenv("CLOUDTRAIN_LOGGING_ENDPOINT", logging_fake.address)
    return EchoKeeping(clock=clock.time, sleep=clock.sleep, policy=TailPolicy(), backoff=api_backoff(sleep=clock.sleep))


CLI_CONFIG = """\
name: cli-job
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
machine: {type: n1-standard-8}
package: {path: trainer}
"""


@pytest.fixture
def cli_config(tmp_path, backend, gcs, monkeypatch) -> Path:
    """A config and its package for CLI tests; the registered Vertex backend is ``backend`` (on the fakes)."""
    import cloudtrain.backends.vertex as vertex_module

    monkeypatch.setattr(vertex_module, "BACKEND", backend)
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text("print('hi')\n")
    path = tmp_path / "vertex.yaml"
    path.write_text(CLI_CONFIG)
    return path
