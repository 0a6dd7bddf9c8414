"""Real jobs on the session's Kubernetes cluster (tools/k8s/cluster.sh), submitted as a user submits them:
``cloudtrain submit`` in a process of its own, the exit code and the lines it prints checked."""

from __future__ import annotations

import json
import re
import signal
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


def test_a_pod_deleted_mid_run_is_replaced_and_the_job_succeeds_with_both_pods_lines(kube, tmp_path):
    release = tmp_path / "out" / "release"
    path = config(tmp_path, args=["--line", "before", "--until", str(release)])
    submit = cloudtrain("submit", "--config", str(path), "--detach")
    assert submit.returncode == 0, submit.stdout + submit.stderr
    job = job_name(kube)
    first = wait_for_pod_line(kube, job, "before")
    kubectl(kube, "delete", "pod", first, "--wait=false")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pods = kubectl(kube, "get", "pods", "-l", f"cloudtrain.dev/run={job}", "-o", "name").split()
        if any(p.split("/")[-1] != first for p in pods):
            break
        time.sleep(1)
    second = wait_for_pod_line(kube, job, "before", not_pod=first)
    release.write_text("go")
    result = cloudtrain("logs", job, "--follow", timeout=180)
    status = json.loads(cloudtrain("status", job, "-o", "json").stdout)
    assert status["state"] == "SUCCEEDED", status
    assert second != first
    shown = job_lines(result.stdout + result.stderr)
    assert [m for r, m in shown if m == "before"] == ["before"], result.stdout  # the deleted pod's lines are gone
    assert "chief#2" in result.stdout + result.stderr or ("chief", "before") in shown


def test_a_jobset_runs_the_replicas_and_cancel_deletes_it(kube, tmp_path):
    lines = ["jobset says hi"]
    path = config(tmp_path, replicas=2, args=["--line", lines[0]], extra="  jobset: 'yes'\n")
    result = cloudtrain("submit", "--config", str(path))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert sorted(r for r, m in job_lines(output) if m == lines[0]) == ["chief", "worker-0"], output
    assert kubectl(kube, "get", "jobsets", "-o", "name").strip() != ""


def test_cancel_stops_a_running_job_with_exit_130_state_and_deletes_it(kube, tmp_path):
    path = config(tmp_path, args=["--line", "holding", "--hold"])
    submit = cloudtrain("submit", "--config", str(path), "--detach")
    assert submit.returncode == 0, submit.stdout + submit.stderr
    job = job_name(kube)
    wait_for_pod_line(kube, job, "holding")
    cancel = cloudtrain("cancel", job)
    assert cancel.returncode in (0, 130), cancel.stdout + cancel.stderr
    deadline = time.monotonic() + 120
    while kubectl(kube, "get", "jobs", "-o", "name").strip() and time.monotonic() < deadline:
        time.sleep(1)
    assert kubectl(kube, "get", "jobs,pods", "-o", "name").strip() == ""


def job_name(kube: Path) -> str:
    (name,) = kubectl(kube, "get", "jobs,jobsets", "-o", "name").split()
    return name.split("/")[-1]


def wait_for_pod_line(kube: Path, job: str, text: str, not_pod: str | None = None, timeout: float = 120) -> str:
    """The pod of ``job`` (other than ``not_pod``) whose log shows ``text``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pod in kubectl(kube, "get", "pods", "-l", f"cloudtrain.dev/run={job}", "-o", "name").split():
            name = pod.split("/")[-1]
            if name == not_pod:
                continue
            log = subprocess.run(
                ["kubectl", "--kubeconfig", str(kube), "logs", name], capture_output=True, text=True, timeout=30
            ).stdout
            if text in log.splitlines():
                return name
        time.sleep(1)
    raise AssertionError(f"no pod of {job} printed {text!r}: {kubectl(kube, 'get', 'pods', '-o', 'wide')}")


@pytest.mark.parametrize("at", ["configmap", "job"])
def test_ctrl_c_during_submit_leaves_a_recorded_job_or_nothing(kube, tmp_path, at):
    """Ctrl-C as soon as the submit's first object (the ConfigMap) or its Job exists: nothing is left that nobody
    knows of: either no object of the submit remains, or its Job runs and the CLI named it (exit 130)."""
    path = config(tmp_path, args=["--line", "x", "--hold"])
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudtrain", "submit", "--config", str(path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    kind = "configmaps" if at == "configmap" else "jobs"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if kubectl(kube, "get", kind, "-l", "app.kubernetes.io/managed-by=cloudtrain", "-o", "name").strip():
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=120)
    jobs = kubectl(kube, "get", "jobs", "-l", "app.kubernetes.io/managed-by=cloudtrain", "-o", "name").split()
    if jobs:
        (job,) = jobs
        assert proc.returncode == 130, output
        assert job.split("/")[-1] in output, output  # named: status / cancel it later
        cloudtrain("cancel", job.split("/")[-1])
    else:
        assert proc.returncode == 130, output
        left = kubectl(
            kube, "get", "configmaps,services", "-l", "app.kubernetes.io/managed-by=cloudtrain", "-o", "name"
        )
        assert left.strip() == "", output
