"""Fixtures for the SageMaker backend: a job spec and a real sdist (the moto server, ``aws``, is
tests/fakes/fixtures.py's, shared with every folder)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from cloudtrain.backends.sagemaker.job_settings import SageMakerSettings
from cloudtrain.packaging import BuiltPackage, build_sdist
from cloudtrain.spec import JobSpec, MachineSpec, PackageSpec
from tests.fakes.aws import ROLE_ARN

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/tensorflow-training:2.16.2-gpu-py310-cu123-ubuntu20.04-sagemaker"
CREATED = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def make_spec(**changes: Any) -> JobSpec:
    """A resolved SageMaker spec for ml.g4dn.12xlarge (4 × T4); ``changes`` replace fields."""
    region = changes.get("region", "us-east-1")
    spec = JobSpec(
        name="mnist",
        job_name="mnist-20250102-030405",
        backend="sagemaker",
        cloud="sagemaker",
        region=region,
        project=None,
        backend_settings=SageMakerSettings(role_arn=ROLE_ARN),
        staging_bucket="s3://cloudtrain-staging",
        machine=MachineSpec(
            type="ml.g4dn.12xlarge",
            accelerator=None,
            accelerator_count=4,
            gpu_model="T4",
            disk_gb=100,
            price_per_hour=3.912,
            price_region="us-east-1",
            price_date="2025-01-01",
        ),
        replica_count=1,
        package=PackageSpec(
            path=Path("/src/trainer"), module="trainer.task", requirements=(), name=None, version="0.1"
        ),
        args=("--epochs", "3"),
        hyperparameters=MappingProxyType(
            {"batch_size_per_replica": 64, "learning_rate": 0.001, "mixed_precision": True}
        ),
        image_uri=IMAGE,
        tensorflow_version="2.16",
        output_dir="s3://cloudtrain-staging/cloudtrain/outputs/mnist-20250102-030405",
        spot=False,
        max_wait_seconds=None,
        max_runtime_seconds=86400,
        labels=MappingProxyType({"team": "vision"}),
        env=MappingProxyType({"TF_CPP_MIN_LOG_LEVEL": "1"}),
        config_file=Path("/src/job_configs/sagemaker-gpu4.yaml"),
        created=CREATED,
    )
    return dataclasses.replace(spec, **changes)


def fake_package(sha256: str = "ab" * 32) -> BuiltPackage:
    """A package as ``render`` sees it: no file needed."""
    return BuiltPackage(
        path=Path(f"/tmp/trainer-0.1-{sha256[:12]}.tar.gz"),
        sha256=sha256,
        size=1234,
        name="trainer",
        version="0.1",
        filename=f"trainer-0.1-{sha256[:12]}.tar.gz",
        files=(),
        warnings=(),
    )


TASK = """\
import json
import os
import sys


def main():
    print("task argv " + json.dumps(sys.argv[1:]))
    print("task file " + os.path.abspath(__file__))
    print("task tf_config " + os.environ.get("TF_CONFIG", "-"))
    code = [a for a in sys.argv[1:] if a.startswith("--exit_code=")]
    return int(code[0].split("=", 1)[1]) if code else 0


if __name__ == "__main__":
    sys.exit(main())
"""


@pytest.fixture
def build_package(tmp_path: Path) -> Callable[..., BuiltPackage]:
    """Build a real sdist of a small ``trainer`` package (``trainer.task`` echoes its argv)."""

    def build(task: str = TASK, name: str = "trainer") -> BuiltPackage:
        src = tmp_path / "src" / name
        src.mkdir(parents=True, exist_ok=True)
        (src / "__init__.py").write_text("")
        (src / "task.py").write_text(task)
        return build_sdist(src, tmp_path / "dist", version="0.1")

    return build
