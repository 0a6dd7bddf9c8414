"""One real Kubernetes cluster per test session (tools/k8s/cluster.sh: etcd, the control plane, two kubelets on
containerd, CoreDNS, JobSet), torn down at the end; its start time is printed in the session's summary."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLUSTER = REPO / "tools" / "k8s" / "cluster.sh"


def cache() -> Path:
    found = subprocess.run(
        ["bash", "-c", f". {REPO}/tools/k8s/versions.sh && echo $K8S_CACHE"], capture_output=True, text=True, check=True
    )
    return Path(found.stdout.strip())


#: What the session's summary reports: the cluster's start, the tests' wall time.
TIMES: dict[str, str] = {}
STARTED = time.monotonic()


def pytest_terminal_summary(terminalreporter) -> None:
    if TIMES:
        times = cache() / "build-times"  # tools/k8s/build.sh's, when it built them
        built = "; ".join(times.read_text().split("\n")).strip("; ") if times.exists() else "cached, times not kept"
        terminalreporter.write_line(f"kubernetes test cluster: {TIMES['cluster']}; binaries {built}")
        terminalreporter.write_line(f"kubernetes tests: {time.monotonic() - STARTED:.0f} s wall time")


@pytest.fixture(scope="session")
def kube_cluster(tmp_path_factory) -> Iterator[Path]:
    """The cluster's folder (its admin kubeconfig is ``kubeconfig`` in it)."""
    if not (cache() / "bin" / "kubelet").exists() or not (cache() / "images" / "debian-python.tar").exists():
        pytest.fail(
            f"the Kubernetes tests need the cluster's binaries and images in {cache()}: "
            "run tools/k8s/setup.sh as root (.ci/run does)"
        )
    root = Path(f"/tmp/ctk8s-{os.getpid()}")  # short: containerd's socket paths have a length limit
    start = time.monotonic()
    try:
        up = subprocess.run([str(CLUSTER), "up", str(root)], capture_output=True, text=True, timeout=300)
    except BaseException:  # Ctrl-C or the timeout while it starts: what it started goes too
        subprocess.run([str(CLUSTER), "down", str(root)], timeout=120)
        raise
    if up.returncode != 0:
        logs = "\n".join(f"--- {p.name}\n{p.read_text()[-1500:]}" for p in sorted((root / "logs").glob("*.log")))
        subprocess.run([str(CLUSTER), "down", str(root)], timeout=120)
        pytest.fail(f"the test cluster did not start: {up.stderr}\n{logs}")
    started = "; ".join((root / "timings").read_text().split("\n")).strip("; ")
    TIMES["cluster"] = f"{started} (fixture {time.monotonic() - start:.1f} s)"
    try:
        yield root
    finally:
        subprocess.run([str(CLUSTER), "down", str(root)], timeout=120)


@pytest.fixture
def kube(kube_cluster, monkeypatch) -> Path:
    """The session's cluster, what a user's kubeconfig would say ($KUBECONFIG), the default namespace empty of jobs."""
    kubeconfig = kube_cluster / "kubeconfig"
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    for kind in ("jobsets", "jobs", "configmaps", "services"):  # one at a time: a cluster may lack JobSet's CRD
        command = [
            "kubectl",
            "--kubeconfig",
            str(kubeconfig),
            "delete",
            kind,
            "-l",
            "app.kubernetes.io/managed-by=cloudtrain",
        ]
        subprocess.run(
            [*command, "--wait=true", "--cascade=foreground", "--timeout=60s"], capture_output=True, timeout=90
        )
    return kubeconfig
