"""Specs built directly (no YAML), and a tiny fake training package installed once per session."""

from __future__ import annotations

import datetime as dt
import os
import sys
import textwrap
from pathlib import Path
from types import MappingProxyType

import pytest

from cloudtrain.backends.local.backend import LocalBackend
from cloudtrain.backends.runner.image import Image, Interpreter
from cloudtrain.backends.sagemaker.job_settings import SageMakerSettings
from cloudtrain.spec import BackendSettings, JobSpec, MachineSpec, PackageSpec
from tests.data.conftest import gcs_host, gcs_store, s3_store  # noqa: F401 — the stores' fixtures (aws: tests/fakes)

JOB_NAME = "demo-20250101-000000"

# Reads its replica's contract, follows FAKE_PLAN ({"<replica>": "ok" | "fail:N" | "hang"}), prints
# trainer-style JSON events, and records its pid and a grandchild's pid for the orphan checks.
FAKE_TASK = """
import json, os, subprocess, sys, time

def replica():
    if os.environ.get("SM_CURRENT_HOST"):
        return os.environ["SM_CURRENT_HOST"]
    tf = json.loads(os.environ.get("TF_CONFIG") or "{}").get("task")
    if not tf or tf["type"] == "chief":
        return "chief"
    return f"worker-{tf['index']}"

name = replica()
action = json.loads(os.environ.get("FAKE_PLAN", "{}")).get(name, "ok")
pids = os.environ.get("FAKE_PIDS")
if pids:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(os.path.join(pids, name), "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
print(f"hello from {name} args={sys.argv[1:]}")
if os.environ.get("FAKE_WRITE"):
    os.makedirs(os.environ["FAKE_WRITE"], exist_ok=True)
print("to stderr", file=sys.stderr)
model_dir = os.environ.get("AIP_MODEL_DIR") or os.environ.get("SM_MODEL_DIR")
keys = sorted(k for k in os.environ if k.startswith(("AIP_", "SM_", "CLOUD_ML", "TF_CONFIG", "CLUSTER_SPEC")))
print("contract " + " ".join(keys))
if action == "hang":
    time.sleep(600)
if action.startswith("fail"):
    deadline = time.monotonic() + 60  # fail once every replica has started (FAKE_FAIL_AFTER_PIDS of them)
    while pids and len(os.listdir(pids)) < int(os.environ.get("FAKE_FAIL_AFTER_PIDS", "0")):
        if time.monotonic() > deadline:
            sys.exit("the other replicas never started")
        time.sleep(0.05)
    print("failing on purpose", file=sys.stderr)
    sys.exit(int(action.split(":")[1]))
for epoch in range(2):
    print(json.dumps({"event": "epoch", "epoch": epoch, "loss": 1.0 / (epoch + 1), "accuracy": 0.5 + epoch / 10}))
if name in ("chief", "algo-1"):
    os.makedirs(model_dir, exist_ok=True)
    with open(os.path.join(model_dir, "metrics.json"), "w") as f:
        json.dump({"loss": 0.5, "accuracy": 0.6, "plan": {"strategy": "fake"}}, f)
    print(json.dumps({"event": "done", "loss": 0.5, "accuracy": 0.6, "wall_time_s": 0.1}))
if pids:
    child.kill()
"""


def make_spec(
    tmp_path: Path,
    *,
    cloud: str = "vertex",
    replica_count: int = 1,
    module: str = "fakepkg.task",
    args: tuple[str, ...] = (),
    hyperparameters: dict | None = None,
    env: dict | None = None,
    output_dir: str | None = None,
    max_runtime: int = 3600,
    machine_type: str | None = None,
) -> JobSpec:
    sagemaker = cloud == "sagemaker"
    return JobSpec(
        name="demo",
        job_name=JOB_NAME,
        backend="local",
        cloud=cloud,
        region="us-east-1" if sagemaker else "us-central1",
        project=None if sagemaker else "my-project",
        staging_bucket=None,
        machine=MachineSpec(
            type=machine_type or ("ml.g4dn.12xlarge" if sagemaker else "n1-standard-16"),
            accelerator=None if sagemaker else "NVIDIA_TESLA_T4",
            accelerator_count=4,
            gpu_model="T4",
            disk_gb=100,
            price_per_hour=None,
            price_region="",
            price_date="",
        ),
        replica_count=replica_count,
        package=PackageSpec(path=tmp_path / "fakepkg", module=module, requirements=(), name=None, version="0.1"),
        args=tuple(args),
        hyperparameters=MappingProxyType(dict(hyperparameters or {})),
        image_uri="us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest",
        tensorflow_version="2.17",
        output_dir=output_dir or str(tmp_path / "out"),
        spot=False,
        max_wait_seconds=None,
        max_runtime_seconds=max_runtime,
        labels=MappingProxyType({}),
        env=MappingProxyType(dict(env or {})),
        config_file=tmp_path / "job.yaml",
        created=dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc),
        # the role moved off JobSpec into SageMaker's settings record (#29); the request needs one
        backend_settings=SageMakerSettings(role_arn="arn:aws:iam::123456789012:role/SageMakerRole")
        if sagemaker
        else BackendSettings(),
    )


@pytest.fixture(scope="session")
def fake_package(tmp_path_factory):
    """The fake package's sdist, built once."""
    from cloudtrain.packaging import build_sdist

    root = tmp_path_factory.mktemp("fake")
    pkg = root / "fakepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text(textwrap.dedent(FAKE_TASK))
    return build_sdist(pkg, root / "dist", name="fakepkg", version="0.1")


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory) -> Path:
    """One env cache for the session: the fake package's env is built once (~4 s), not per test."""
    return tmp_path_factory.mktemp("shared-cache")


def bare_image() -> Image:
    """An image layer with no TensorFlow: this interpreter's venv, its bundled pip, and what builds an sdist."""
    base = getattr(sys, "_base_executable", sys.executable)
    python = Interpreter(os.path.realpath(base), f"{sys.version_info[0]}.{sys.version_info[1]}")
    return Image("vertex", python, ("setuptools>=62.3", "wheel"), None, None, None)


@pytest.fixture(scope="session")
def no_tf(shared_cache):
    """A local backend factory on the bare image (fast: no TensorFlow to install)."""

    def make(**kwargs):
        kwargs.setdefault("cache_root", shared_cache)
        kwargs.setdefault("gpu_count", lambda: 0)
        return LocalBackend(image_for=lambda spec: bare_image(), log=lambda m: None, **kwargs)

    return make


def pid_alive(pid: int) -> bool:
    """Running or sleeping; a zombie waiting for a reaper counts as gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"
