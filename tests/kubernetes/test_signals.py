"""Cancel and Ctrl-C on the session's Kubernetes cluster: a cancelled job's pods gone (foreground deletion),
and a Ctrl-C at each step of a submit, sent to the whole foreground process group as a terminal sends it,
leaves a recorded job with its reattach and cancel lines, or nothing on the cluster — never an orphan."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from cloudtrain.history import history_file
from tests.kubernetes.test_jobs import cloudtrain, config, kubectl
from tests.kubernetes.test_runs import Follower, job_id

pytestmark = [pytest.mark.slow, pytest.mark.server]

OURS = "app.kubernetes.io/managed-by=cloudtrain"

#: ``python -m cloudtrain ARGS`` with a Ctrl-C landing at one step of the submit: just before (or just after)
#: the API server answers the create of a kind ($CT_INTERRUPT=before:ConfigMap, after:Job …), to the whole
#: process group, as a terminal sends it.
AT_STEP = """\
import os, runpy, signal, sys, time
from cloudtrain.backends.kubernetes.backend import KubernetesBackend

when, kind = os.environ["CT_INTERRUPT"].split(":")
create = KubernetesBackend._create

def interrupted(self, cluster, obj, dry_run=None):
    if obj["kind"] == kind and when == "before":
        os.killpg(0, signal.SIGINT)
        time.sleep(1)
    made = create(self, cluster, obj, dry_run)
    if obj["kind"] == kind and when == "after":
        os.killpg(0, signal.SIGINT)
        time.sleep(1)
    return made

KubernetesBackend._create = interrupted
sys.argv = ["cloudtrain", *sys.argv[1:]]
runpy.run_module("cloudtrain", run_name="__main__")
"""


def left_on_cluster(kube: Path) -> list[str]:
    """Our objects still there once foreground deletions are through (pods first, then their owners)."""
    deadline = time.monotonic() + 90
    while True:
        left = kubectl(kube, "get", "jobs,jobsets,configmaps,services,pods", "-l", OURS, "-o", "name").split()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(1)


def recorded(job: str) -> bool:
    path = history_file()
    return path.exists() and any(json.loads(line).get("job_id") == job for line in path.read_text().splitlines())


def test_cancel_deletes_a_running_job_and_its_pods_and_its_status_is_cancelled_exit_130(kube, tmp_path):
    path = config(tmp_path, replicas=2, args=["--line", "holding", "--hold"], extra="  jobset: 'no'\n")
    submit = cloudtrain("submit", "--config", str(path), "--detach")
    assert submit.returncode == 0, submit.stdout + submit.stderr
    job = job_id(submit.stdout + submit.stderr)
    follow = Follower("logs", "--follow", job)
    follow.wait_for(r"^worker-0\s*\| holding$")
    follow.wait_for(r"^chief\s*\| holding$")
    cancel = cloudtrain("cancel", job)
    assert cancel.returncode == 0 and f"Job {job}: CANCELLED" in cancel.stdout, cancel.stdout + cancel.stderr
    assert follow.end(timeout=180) == 130, follow.output  # the follower ends with the job: cancelled
    assert re.search(rf"Job {job}: CANCELLED", follow.output), follow.output
    assert left_on_cluster(kube) == []
    assert recorded(job)
    later = cloudtrain("status", job)  # a new process: every object is gone, the end is kept in history
    assert later.returncode == 0 and "state: CANCELLED" in later.stdout, later.stdout + later.stderr


@pytest.mark.parametrize(
    ("step", "created"),
    [
        ("before:ConfigMap", False),  # the package is built, nothing is on the cluster yet
        ("after:ConfigMap", False),  # the ConfigMap exists: deleted again
        ("after:Service", False),
        ("before:Job", True),  # the job is about to exist: held until it is in history
        ("after:Job", True),
        ("following", True),
    ],
)
def test_ctrl_c_at_each_step_of_a_submit_leaves_a_recorded_job_or_nothing(kube, tmp_path, step, created):
    path = config(tmp_path, args=["--line", "holding", "--hold"], extra="  jobset: 'no'\n")
    python = ("-m", "cloudtrain") if step == "following" else ("-c", AT_STEP)
    submit = Follower("submit", "--config", str(path), python=python, env={**os.environ, "CT_INTERRUPT": step})
    if step == "following":
        submit.wait_for(r"^chief\s*\| holding$")
        submit.interrupt()  # to its process group, as a terminal's Ctrl-C
    code = submit.end(timeout=240)
    output = submit.output
    assert code == 130, output
    if not created:
        assert "Interrupted." in output, output
        assert left_on_cluster(kube) == [], output
        assert not history_file().exists() or history_file().read_text().strip() == "", output
        return
    job = job_id(output)
    assert f"Detached; job {job} keeps running." in output, output
    assert re.search(rf"cloudtrain logs \S*{job}\S* --follow", output), output
    assert re.search(rf"cloudtrain cancel \S*{job}", output), output
    assert recorded(job), output
    status = cloudtrain("status", job, "-o", "json")
    assert json.loads(status.stdout)["state"] in ("PENDING", "RUNNING"), status.stdout + status.stderr
    assert cloudtrain("cancel", job).returncode == 0
    assert left_on_cluster(kube) == []
