"""Real jobs on the session's Kubernetes cluster (tools/k8s/cluster.sh), submitted as a user submits them:
``cloudtrain submit`` in a process of its own, the exit code and the lines it prints checked."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.kubernetes.conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.server]

ECHO_LINES = REPO / "tests" / "packages" / "echo_lines"
IMAGE = "cloudtrain.local/debian-python:bookworm"


def cloudtrain(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cloudtrain", *args], capture_output=True, text=True, timeout=timeout, cwd=REPO
    )


def kubectl(kubeconfig: Path, *args: str) -> str:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args], capture_output=True, text=True, check=True, timeout=60
    ).stdout


def config(
    tmp_path: Path,
    *,
    replicas: int = 1,
    args: list[str] | None = None,
    extra: str = "",
    package: str = "",
    namespace: str = "default",
    gpus: int = 0,
) -> Path:
    out = tmp_path / "out"
    package = package or f"  path: {ECHO_LINES}\n  module: echo_lines.task\n"
    text = (
        f"name: kube-{tmp_path.name[-8:].lower().strip('_-') or 'job'}\nbackend: kubernetes\n"
        f"kubernetes:\n  namespace: {namespace}\n  image: {IMAGE}\n  volumes:\n"
        f"    {out}: {{hostPath: {{path: {out}, type: DirectoryOrCreate}}}}\n{extra}"
        f"replica_count: {replicas}\nmachine:\n  accelerator_count: {gpus}\npackage:\n{package}"
        f"args: {json.dumps(args or [])}\noutput_dir: {out}\nmax_runtime: 10m\n"
    )
    path = tmp_path / "job.yaml"
    path.write_text(text)
    return path


def job_lines(output: str) -> list[tuple[str, str]]:
    """(replica, message) of each job line the follower printed."""
    return re.findall(r"^\[?(chief|worker-\d+)(?:#\d+)?\]?\s*[:|]?\s*(.*)$", output, re.M)


def test_two_replicas_print_each_line_once_and_run_on_both_nodes(kube, tmp_path):
    lines = [f"line {i} of {tmp_path.name}" for i in range(5)]
    path = config(tmp_path, replicas=2, args=[a for line in lines for a in ("--line", line)])
    result = cloudtrain("submit", "--config", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    shown = job_lines(result.stdout + result.stderr)
    for replica in ("chief", "worker-0"):
        assert [m for r, m in shown if r == replica and m in lines] == lines, result.stdout + result.stderr
    nodes = {m.split(" on ")[-1] for _, m in shown if m.startswith("cloudtrain: replica")}
    assert nodes == {"node-a", "node-b"}, result.stdout + result.stderr


FAIL_SCRIPT = """\
import os, sys
index = int(os.environ["JOB_COMPLETION_INDEX"])
print(f"script replica {index} starts", flush=True)
if index == 1:
    print("replica 1 gives up: exit 3", flush=True)
    sys.exit(3)
print(f"script replica {index} done", flush=True)
"""


def test_a_failing_replica_of_a_script_fails_the_job_with_exit_1_naming_it_with_its_last_lines(kube, tmp_path):
    folder = tmp_path / "script"
    folder.mkdir()
    (folder / "train.py").write_text(FAIL_SCRIPT)
    path = config(tmp_path, replicas=2, package=f"  path: {folder}\n  script: train.py\n")
    result = cloudtrain("submit", "--config", str(path))
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert re.search(
        r"replica worker-0 \(pod \S+ on node-[ab]\) exited 3; its last lines: .*replica 1 gives up", output
    )
    assert ("worker-0", "replica 1 gives up: exit 3") in job_lines(output), output


def test_a_request_no_node_can_take_is_refused_with_the_schedulers_reason_and_nothing_left(kube, tmp_path):
    path = config(tmp_path, replicas=1, gpus=2)
    result = cloudtrain("submit", "--config", str(path))
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "the cluster cannot run this job: Unschedulable: 0/2 nodes are available" in output, output
    assert "Insufficient nvidia.com/gpu" in output, output
    left = kubectl(
        kube, "get", "jobs,configmaps,services", "-l", "app.kubernetes.io/managed-by=cloudtrain", "-o", "name"
    )
    deadline = time.monotonic() + 60
    while left.strip() and time.monotonic() < deadline:  # foreground deletion: the pods first
        time.sleep(1)
        left = kubectl(
            kube, "get", "jobs,configmaps,services", "-l", "app.kubernetes.io/managed-by=cloudtrain", "-o", "name"
        )
    assert left.strip() == ""


def test_a_jobset_runs_both_replicas_each_line_once(kube, tmp_path):
    lines = ["jobset says hi"]
    path = config(tmp_path, replicas=2, args=["--line", lines[0]], extra="  jobset: 'yes'\n")
    result = cloudtrain("submit", "--config", str(path))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert sorted(r for r, m in job_lines(output) if m == lines[0]) == ["chief", "worker-0"], output
    assert kubectl(kube, "get", "jobsets", "-o", "name").strip() != ""
