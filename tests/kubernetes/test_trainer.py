"""The bundled trainer, two replicas on the two nodes of the session's cluster, MultiWorkerMirroredStrategy
between them over the headless Service's names (TF_CONFIG from the launcher). The pods run the test
environment's TensorFlow from the host (its Python and .venv mounted at the same paths: test-only)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.kubernetes.conftest import REPO
from tests.kubernetes.test_jobs import IMAGE, cloudtrain, job_lines, kubectl

pytestmark = [pytest.mark.slow, pytest.mark.server, pytest.mark.tf]


def events(kube: Path, index: int) -> dict[str, dict]:
    """The trainer's JSON events in the log of the job's pod of that index, by name."""
    pods = json.loads(kubectl(kube, "get", "pods", "-l", "app.kubernetes.io/managed-by=cloudtrain", "-o", "json"))
    (pod,) = [
        p["metadata"]["name"]
        for p in pods["items"]
        if p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == str(index)
    ]
    found = {}
    for message in kubectl(kube, "logs", pod).splitlines():
        if message.startswith("{"):
            try:
                record = json.loads(message)
            except ValueError:
                continue
            found[record.get("event")] = record
    return found


def test_the_bundled_trainer_trains_across_both_nodes(kube, tmp_path):
    out = tmp_path / "out"
    venv = Path(sys.prefix)
    base = Path(sys.base_prefix)
    path = tmp_path / "mnist.yaml"
    path.write_text(
        f"""\
name: mnist-kube
backend: kubernetes
kubernetes:
  image: {IMAGE}
  python: {venv}/bin/python
  volumes:
    {out}: {{hostPath: {{path: {out}, type: DirectoryOrCreate}}}}
    {venv}: {{hostPath: {{path: {venv}, type: Directory}}}}
    {base}: {{hostPath: {{path: {base}, type: Directory}}}}
replica_count: 2
machine:
  accelerator_count: 0
package:
  path: {REPO / "trainer"}
  module: trainer.task
args: [--data=digits, --epochs=1, --batch-size=64]
output_dir: {out}
max_runtime: 20m
"""
    )
    result = cloudtrain("submit", "--config", str(path), timeout=900)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    nodes = {m.split(" on ")[-1] for _, m in job_lines(output) if m.startswith("cloudtrain: replica")}
    assert nodes == {"node-a", "node-b"}, output
    chief, worker = events(kube, 0), events(kube, 1)
    assert chief["done"]["weights_sha256"] == worker["worker_done"]["weights_sha256"], output
    assert any((out / "model").iterdir())
