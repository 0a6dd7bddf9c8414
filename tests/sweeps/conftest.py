"""The servers the sweep tests create tuning jobs on (the backends' own fixtures), and a project with
a user's sweep script for local sweeps."""

import shutil
import textwrap
from pathlib import Path

import pytest

from tests.backends.sagemaker.conftest import build_package  # noqa: F401 — aws: tests/fakes/fixtures.py
from tests.backends.vertex.conftest import backend, clock, gcs, jobs, logging_fake  # noqa: F401

SWEEP_SCORE = Path(__file__).resolve().parents[1] / "packages" / "sweep_score"


@pytest.fixture
def sweep_dir(tmp_path: Path, tf_cache: Path) -> Path:
    """A project with the user's script and a 3-trial sweep of it; local environments from the shared cache."""
    shutil.copytree(SWEEP_SCORE, tmp_path / "sweep_score")
    (tmp_path / "sweep.yaml").write_text(
        textwrap.dedent(f"""
        name: score-sweep
        backend: local
        region: us-central1
        machine: {{type: n1-standard-4}}
        package: {{path: sweep_score, module: sweep_score.task}}
        args: [--hold-file={tmp_path / "hold"}]
        sweep:
          metric: score
          goal: maximize
          max_trials: 3
          parallel_trials: 1
          algorithm: random
          seed: 5
          params:
            lr: {{min: 0.001, max: 0.1, scale: log}}
        """)
    )
    cache = tmp_path / "cache"
    cache.mkdir()
    (tf_cache / "envs").mkdir(parents=True, exist_ok=True)
    (cache / "envs").symlink_to(tf_cache / "envs")
    return tmp_path
