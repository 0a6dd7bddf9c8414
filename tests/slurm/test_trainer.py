"""The bundled trainer on two Slurm nodes through `cloudtrain submit --config job_configs/slurm.yaml`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.slurm.test_submit import cloudtrain

pytestmark = [pytest.mark.slow, pytest.mark.server, pytest.mark.tf]


def events(log: Path) -> dict[str, dict]:
    """The trainer's JSON events in one task's output file, by name."""
    out = {}
    for line in log.read_text().splitlines():
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            out[record.get("event")] = record
    return out


def test_the_bundled_trainer_trains_across_two_nodes(slurm, workdir):
    result = cloudtrain(
        "submit",
        "--config",
        "job_configs/slurm.yaml",
        "--set",
        f"slurm.workdir={workdir}",
        "--set",
        "args=[--data=digits, --epochs=1, --batch-size=64]",
        timeout=600,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "node1/task-0" in out and "node2/task-1" in out, out
    (run,) = (workdir / "runs").iterdir()
    chief, worker = events(run / "slurm/r0/task-0.log"), events(run / "slurm/r0/task-1.log")
    assert chief["done"]["weights_sha256"] == worker["worker_done"]["weights_sha256"]
    # the plan names Slurm, the job's nodes and the GPUs per node (CPU nodes here)
    job_id = json.loads((run / "slurm/r0/task-0.json").read_text())["job_id"]
    assert chief["plan"]["slurm"] == {
        "job_id": job_id,
        "nodes": ["node1", "node2"],
        "node": "node1",
        "gpus_per_node": 0,
    }
    assert (
        "nodes             node1, node2 (2 x 0 GPUs per node); this task on node2"
        in (run / "slurm/r0/task-1.log").read_text()
    )
    tasks = [json.loads((run / f"slurm/r0/task-{i}.json").read_text()) for i in (0, 1)]
    assert [(t["node"], t["exit"]) for t in tasks] == [("node1", 0), ("node2", 0)]
    assert any((run / "model").iterdir())
