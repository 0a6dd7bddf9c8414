"""Slurm's leg of the contract suite (cloudtrain.testing.contract), on the real test cluster.

The same tests Vertex AI, SageMaker, the local backend and the example backend pass
(tests/backends/test_contract.py), run here as a backend of another distribution runs them on
itself: a :class:`Leg` whose jobs are real Slurm jobs of a small package without TensorFlow
(tests/packages/echo_lines), scripted through its arguments. A Slurm job's full name is what
``status`` names it, ``<cluster>:<run folder>``."""

from __future__ import annotations

import dataclasses

import pytest

from cloudtrain.backends import get_backend
from cloudtrain.config.load import load_config
from cloudtrain.packaging import build_sdist
from cloudtrain.spec import build_spec
from cloudtrain.testing.contract import *  # noqa: F403 - the contract's tests, run on the leg below
from cloudtrain.testing.contract import Leg
from tests.slurm.test_submit import REPO

pytestmark = [pytest.mark.slow, pytest.mark.server]

ECHO_LINES = REPO / "tests" / "packages" / "echo_lines"

CONFIG = """\
name: contract
backend: slurm
slurm:
  workdir: {workdir}
  partition: debug
replica_count: 1
machine:
  accelerator_count: 0
package:
  path: {package}
  module: echo_lines.task
max_runtime: 10m
"""


@pytest.fixture
def leg(slurm, workdir, tmp_path) -> Leg:
    path = tmp_path / "contract.yaml"
    path.write_text(CONFIG.format(workdir=workdir, package=ECHO_LINES))
    spec = build_spec(load_config(path))
    package = build_sdist(ECHO_LINES, tmp_path / "dist", name="echo_lines", version="0.1")

    def succeed(lines: list[str]) -> None:
        slurm_leg.spec = dataclasses.replace(spec, args=tuple(a for line in lines for a in ("--line", line)))

    def keep_running() -> None:
        slurm_leg.spec = dataclasses.replace(spec, args=("--hold",))

    slurm_leg = Leg(get_backend("slurm"), spec, package, succeed, keep_running, lambda handle: handle.status().name)
    return slurm_leg
