"""`cloudtrain submit` on the real test cluster: a user's package across two nodes, failures, cancel."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.server]

PROBE_CONFIG = """\
name: probe
backend: slurm
slurm:
  workdir: {workdir}
  partition: debug
replica_count: 2
machine:
  accelerator_count: 0
package:
  path: {package}
  module: slurm_probe.task
data:
  train: {data}
args: {args}
"""


def cloudtrain(*args: str, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cloudtrain", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, **kwargs)  # fmt: skip


def probe_config(tmp_path: Path, workdir: Path, args: list[str]) -> Path:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "a.txt").write_text("a")
    path = tmp_path / "probe.yaml"
    path.write_text(PROBE_CONFIG.format(workdir=workdir, package=REPO / "tests/packages/slurm_probe",
                                        data=data, args=json.dumps(args)))  # fmt: skip
    return path


def labelled(output: str) -> list[tuple[str, str]]:
    """(replica, message) of each job line as the follower prints them."""
    return re.findall(r"^\s*\[?([\w?-]+/task-\d+)\]?\s*[:|]?\s*(.*)$", output, re.M)


def test_a_users_package_runs_one_task_per_node(slurm, workdir, tmp_path):
    result = cloudtrain("submit", "--config", str(probe_config(tmp_path, workdir, ["--lines=3"])))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout + result.stderr
    contracts = [json.loads(m) for m in re.findall(r"CONTRACT (\{.*\})$", out, re.M)]
    assert sorted(c["task"] for c in contracts) == ["chief:0", "worker:0"]
    # both tasks saw the same cluster: two distinct address:port pairs, chief first
    clusters = {json.dumps(c["cluster"]) for c in contracts}
    assert len(clusters) == 1
    cluster = contracts[0]["cluster"]
    assert len(set(cluster["chief"] + cluster["worker"])) == 2
    assert all(c["channels"] == {"SM_CHANNEL_TRAIN": str(tmp_path / "data")} for c in contracts)
    for me in ("chief:0", "worker:0"):
        assert [line for line in out.splitlines() if f"line 1 from {me}" in line].__len__() == 1, out
    assert re.search(r"node1/task-0.*line 0 from chief:0", out), out
    assert re.search(r"node2/task-1.*line 0 from worker:0", out), out
