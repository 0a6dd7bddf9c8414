"""The exact manifests of what users' configs vary (replicas, GKE and EKS GPUs with spot, selectors, a service
account, tolerations, secrets, a staged package), as an indexed Job and as a JobSet, pinned offline in
``golden/``: the cases of tests/kubernetes/test_features.py, which has the API server validate them; this one
catches any change to them. After a deliberate change: ``CLOUDTRAIN_UPDATE_GOLDEN=1 .venv/bin/pytest
tests/kubernetes/test_golden.py`` and read the diff."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

import pytest

from cloudtrain.backends.kubernetes import manifests
from cloudtrain.config.load import load_config
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import build_spec
from tests.kubernetes.test_features import CASES, gpu_type
from tests.kubernetes.test_jobs import ECHO_LINES

GOLDEN = Path(__file__).parent / "golden"
NOW = dt.datetime(2026, 12, 1, 9, 30, 0, tzinfo=dt.timezone.utc)
PACKAGE = BuiltPackage(Path("/dist/t-0.1-cd.tar.gz"), "cd" * 32, 2048, "t", "0.1", "t-0.1-cd.tar.gz", (), ())


def rendered(tmp_path: Path, case: str, jobset: bool, staged: str | None) -> list[dict[str, Any]]:
    section, top, replicas, gpus = CASES[case]
    machine = f"  accelerator_count: {gpus}\n" + (f"  accelerator_type: {gpu_type(section)}\n" if gpus else "")
    section = section or "  namespace: default\n"
    path = tmp_path / "job.yaml"
    path.write_text(
        f"{top}name: golden\nbackend: kubernetes\nkubernetes:\n{section}"
        "  image: registry.example/train:1\n"
        f"replica_count: {replicas}\nmachine:\n{machine}package:\n  path: {ECHO_LINES}\n  module: echo_lines.task\n"
        "args: [--epochs=2]\noutput_dir: s3://bucket/golden\nmax_runtime: 1h\n"
        + ("staging_bucket: s3://bucket\n" if staged else "")
    )
    objects = manifests.render(
        build_spec(load_config(path), now=NOW, suffix="k8s"), PACKAGE, jobset=jobset, staged=staged
    )
    for obj in objects:  # the launcher is pinned by its own tests; its text would only repeat itself here
        if obj["kind"] == "ConfigMap":
            obj["data"]["launcher.py"] = f"<{len(obj['data']['launcher.py'])} characters>"
            obj["data"]["plan.json"] = json.loads(obj["data"]["plan.json"])
    return objects


@pytest.mark.parametrize("jobset", [False, True], ids=["job", "jobset"])
@pytest.mark.parametrize("case", sorted(CASES) + ["staged"])
def test_the_manifests_are_the_golden_ones(case, jobset, tmp_path, monkeypatch):
    monkeypatch.setenv("K8S_TEST_TOKEN", "never-read-by-a-dry-run")
    objects = rendered(tmp_path, "secrets" if case == "staged" else case, jobset, "***" if case == "staged" else None)
    text = json.dumps(objects, indent=1, sort_keys=True) + "\n"
    path = GOLDEN / f"{case}-{'jobset' if jobset else 'job'}.json"
    if os.environ.get("CLOUDTRAIN_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"the manifests changed; see this module's docstring ({path.name})"
