"""Kubernetes' leg of the contract suite (cloudtrain.testing.contract), on the session's real cluster.

The same tests every backend passes (tests/backends/test_contract.py), as a plugin runs them on itself: a
:class:`Leg` whose jobs are real indexed Jobs of tests/packages/echo_lines (no TensorFlow), scripted through
its arguments. A job's full name is ``kubernetes:<context>/<namespace>/<name>``."""

from __future__ import annotations

import dataclasses

import pytest

from cloudtrain.backends import get_backend
from cloudtrain.config.load import load_config
from cloudtrain.packaging import build_sdist
from cloudtrain.spec import build_spec
from cloudtrain.testing.contract import *  # noqa: F403 - the contract's tests, run on the leg below
from cloudtrain.testing.contract import Leg
from tests.kubernetes.test_jobs import ECHO_LINES, config

pytestmark = [pytest.mark.slow, pytest.mark.server]


@pytest.fixture
def leg(kube, tmp_path) -> Leg:
    spec = build_spec(load_config(config(tmp_path)))
    package = build_sdist(ECHO_LINES, tmp_path / "dist", name="echo_lines", version="0.1")

    def succeed(lines: list[str]) -> None:
        kube_leg.spec = dataclasses.replace(spec, args=tuple(a for line in lines for a in ("--line", line)))

    def keep_running() -> None:
        kube_leg.spec = dataclasses.replace(spec, args=("--hold",))

    def full_name(handle) -> str:
        return f"kubernetes:{handle.location['region']}/{handle.location['project']}/{handle.job_id}"

    kube_leg = Leg(get_backend("kubernetes"), spec, package, succeed, keep_running, full_name)
    return kube_leg
