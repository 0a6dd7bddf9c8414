"""GPU nodes get TensorFlow with its own CUDA libraries unless ``slurm.setup`` loads the cluster's CUDA.

Offline: the dry run's requirement line and environment (no GPU node here; docs/how-to/slurm.md says
that the build on a real GPU node is checked only where one is at hand)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.slurm.test_slurm_config import write_config


def dry_run(tmp_path, changes) -> dict:
    tmp_path.mkdir(exist_ok=True)
    path = write_config(tmp_path, changes)
    result = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "submit", "--config", str(path), "--dry-run", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["request"]


def environment(request: dict) -> str:
    return next(c for c in request["commands"] if c.startswith("build the environment"))


@pytest.mark.parametrize(
    ("changes", "build"),
    [
        (
            {"machine": {"accelerator_count": 4}, "image": {"tensorflow": "2.17"}},
            "tensorflow[and-cuda]==2.17.* for 4 GPUs per node: TensorFlow with its own CUDA libraries",
        ),
        (
            {"machine": {"accelerator_count": 1}, "image": {"tensorflow": "2.16"}},
            "tensorflow[and-cuda]==2.16.* for 1 GPU per node: TensorFlow with its own CUDA libraries",
        ),
        (
            {
                "machine": {"accelerator_count": 4},
                "image": {"tensorflow": "2.17"},
                "slurm": {"workdir": "/fsx/cloudtrain", "setup": ["source /fsx/env.sh", "module load cuda/12.2"]},
            },
            "tensorflow==2.17.* for 4 GPUs per node, CUDA from the cluster ('module load cuda/12.2')",
        ),
        (
            {"machine": {"accelerator_count": 0}, "image": {"tensorflow": "2.17"}},
            "tensorflow==2.17.* (CPU only: no GPU requested or seen)",
        ),
    ],
)
def test_the_dry_run_says_which_tensorflow_build_the_nodes_get(changes, build, tmp_path):
    assert dry_run(tmp_path, changes)["tensorflow_build"] == build


def test_gpu_nodes_and_cpu_nodes_use_different_environments(tmp_path):
    gpu = dry_run(tmp_path / "gpu", {"machine": {"accelerator_count": 4}})
    cpu = dry_run(tmp_path / "cpu", {"machine": {"accelerator_count": 0}})
    cluster_cuda = dry_run(
        tmp_path / "module",
        {"machine": {"accelerator_count": 4}, "slurm": {"workdir": "/fsx/cloudtrain", "setup": ["ml cuda"]}},
    )
    assert environment(gpu) != environment(cpu)
    assert environment(cluster_cuda) == environment(cpu)  # the same requirements: the same cached layer
