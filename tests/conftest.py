"""Shared fixtures: a throwaway project with a package, and a clean cloudtrain cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cloudtrain.backends import register
from cloudtrain.config import schema  # noqa: F401 - read the registry before the test-only backend joins it

REPO = Path(__file__).resolve().parents[1]


def run_cli(*args: str, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """``cloudtrain ARGS`` in a process of its own, as people and scripts run it: stdout and stderr as pipes."""
    return subprocess.run(
        [sys.executable, "-m", "cloudtrain", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


pytest_plugins = ("tests.fakes.fixtures",)  # the servers' fixtures (moto), once for every folder

# The test-only backend (tests/backends/test_contract.py); registered after the config schema read the
# registry, so the generated config reference stays cloudtrain's own, while load_config and the CLI read
# `backend: example` and its `example:` keys (schema.registered_config, tests/config/test_backend_sections.py).
register("example", "tests.backends.example", section="tests.backends.example.section:Section")

VERTEX_BASE = """\
name: demo
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
machine:
  type: n1-standard-16
  accelerator: NVIDIA_TESLA_T4
  accelerator_count: 4
package:
  path: trainer
  module: trainer.task
"""

SAGEMAKER_BASE = """\
name: demo
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://my-bucket
machine:
  type: ml.g4dn.xlarge
package:
  path: trainer
  module: trainer.task
"""


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Never touch the user's ~/.cache/cloudtrain from tests."""
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path_factory.mktemp("cloudtrain-cache")))
    # As under `uv run` (make test): local envs install the image layer with uv, from its cache.
    uv = os.environ.get("UV") or shutil.which("uv") or str(REPO / ".tools" / "bin" / "uv")
    if os.access(uv, os.X_OK):
        monkeypatch.setenv("UV", uv)


@pytest.fixture(scope="session")
def tf_cache() -> Path:
    """The env cache for runs with TensorFlow, kept across test runs (content-keyed, so never stale):
    an image layer (Python 3.10 + TF 2.17 for the Vertex default, the README's command) is built
    once per checkout, not once per test or per run. It lives in the repository (``.test-cache/``,
    ignored by git), as everything a test reads does: a fresh clone builds its own.
    ``$CLOUDTRAIN_TEST_ENV_CACHE`` moves it."""
    return Path(os.environ.get("CLOUDTRAIN_TEST_ENV_CACHE") or REPO / ".test-cache" / "envs")


@pytest.fixture(scope="session")
def tf_image():
    """The Vertex default image's slim layer (``local.layer: slim``): the TensorFlow env most local tests and the
    Slurm runs share (a cluster gets the slim layer); the image's full layer is tested in test_local_image.py."""
    from cloudtrain.backends.runner.image import resolve_image
    from cloudtrain.backends.runner.interpreters import find_python

    return resolve_image("vertex", None, find=find_python, slim=True)


@pytest.fixture(autouse=True)
def _no_gcloud_project(tmp_path_factory, monkeypatch):
    """Never read the user's gcloud configuration or credentials for the Vertex project."""
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path_factory.mktemp("gcloud-config")))
    for name in (
        "CLOUDSDK_CORE_PROJECT",
        "CLOUDSDK_ACTIVE_CONFIG_NAME",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(tmp_path: Path):
    """A project folder with a minimal `trainer` package; returns a function writing a config."""
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text("print('hello from task')\n")

    def write(text: str = VERTEX_BASE, name: str = "job.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write
