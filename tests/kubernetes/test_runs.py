"""TensorFlow on the session's Kubernetes cluster, as a user runs it: the bundled trainer on two nodes
(MultiWorkerMirroredStrategy, TF_CONFIG from the pods' DNS names), a user's script-mode script, a pod
deleted mid-run and resumed from its checkpoint, and a follower that outlives an API server restart.

The pods' Python is Debian's (the test image); the test environment's TensorFlow reaches them through a
host folder (a hostPath volume and PYTHONPATH), a stand-in for the prebuilt image a cluster pulls."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

import pytest

from tests.kubernetes.conftest import REPO
from tests.kubernetes.test_jobs import cloudtrain, config, job_lines, kubectl

pytestmark = [pytest.mark.slow, pytest.mark.server]

SITE = sysconfig.get_paths()["purelib"]  # the test environment's site-packages: TensorFlow and Keras
WILD = REPO / "tests" / "packages" / "wild"


def tf_config(tmp_path: Path, *, replicas: int, package: str, args: list[str], extra: str = "", env: str = "") -> Path:
    """A job whose pods see the test environment's TensorFlow (read-only, as the prebuilt image has it)."""
    volume = f"    {SITE}: {{hostPath: {{path: {SITE}, type: Directory}}}}\n"
    return config(
        tmp_path,
        replicas=replicas,
        package=package,
        args=args,
        extra=f"{volume}{extra}env:\n  PYTHONPATH: {SITE}\n{env}",
    )


def job_id(output: str) -> str:
    found = re.search(r"^(?:Job|JobSet) (\S+) created", output, re.M)
    assert found, output
    return found.group(1)


def pod_logs(kube: Path, job: str) -> dict[str, list[str]]:
    """Each pod of ``job`` (by its replica index) → its lines as the API keeps them (ground truth)."""
    pods = json.loads(kubectl(kube, "get", "pods", "-l", f"cloudtrain.dev/run={job}", "-o", "json"))["items"]
    out = {}
    for pod in pods:
        index = int(pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"])
        out[f"{index}"] = kubectl(kube, "logs", pod["metadata"]["name"]).rstrip("\n").split("\n")
    return out


def replica_lines(output: str, replica: str) -> list[str]:
    """What the follower printed for ``replica`` (``chief``, ``worker-0``, ``chief#2``), in order."""
    return [m.group(1) for m in re.finditer(rf"^{re.escape(replica)}\s*\| ?(.*)$", output, re.M)]


def each_once(shown: list[str], log: list[str]) -> None:
    """Every text line of a pod's log shown once, in its order (its JSON events are shown rendered, and a
    progress bar redrawn with carriage returns or backspaces as its last state; blank lines are not shown)."""
    text = [line.rstrip() for line in log if line.strip() and not line.startswith("{") and line.isprintable()]
    assert [line.rstrip() for line in shown if line.rstrip() in set(text)] == text, "\n".join(shown)


def events(log: list[str]) -> dict[str, dict]:
    return {e["event"]: e for e in (json.loads(line) for line in log if line.startswith('{"event"'))}


def test_the_bundled_trainer_trains_across_both_nodes_with_multi_worker_mirrored_strategy(kube, tmp_path):
    path = tf_config(
        tmp_path,
        replicas=2,
        package=f"  path: {REPO / 'trainer'}\n  module: trainer.task\n",
        args=["--data=digits", "--epochs=1", "--batch-size=64"],
    )
    result = cloudtrain("submit", "--config", str(path), timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    job = job_id(output)
    logs = pod_logs(kube, job)
    assert sorted(logs) == ["0", "1"], logs
    for index, replica in (("0", "chief"), ("1", "worker-0")):
        each_once(replica_lines(output, replica), logs[index])
    chief, worker = events(logs["0"]), events(logs["1"])
    assert chief["plan"]["strategy"] == "multi_worker_mirrored" and chief["plan"]["workers"] == 2, chief["plan"]
    assert chief["done"]["weights_sha256"] == worker["worker_done"]["weights_sha256"]
    nodes = {m.split(" on ")[-1] for _, m in job_lines(output) if m.startswith("cloudtrain: replica")}
    assert nodes == {"node-a", "node-b"}, output
    out = tmp_path / "out"
    assert (out / "model" / "saved_model.pb").is_file() and (out / "model" / "model.keras").is_file()
    assert [p.name for p in (out / "checkpoints").iterdir()] == [f"ckpt-{chief['done']['steps']}"]


def test_a_users_script_mode_script_trains_and_prints_its_test_accuracy(kube, tmp_path):
    """keras.io's mnist_convnet, unchanged, in script mode (its job.yaml's package:), data from a file."""
    data = tmp_path / "out" / "mnist.npz"
    data.parent.mkdir()
    make_data = WILD / "keras_io_mnist_convnet" / "make_data.py"
    subprocess.run([sys.executable, str(make_data), str(data)], check=True, timeout=120)
    path = tf_config(
        tmp_path,
        replicas=1,
        package=f"  path: {WILD / 'keras_io_mnist_convnet'}\n  script: mnist_convnet.py\n",
        args=[],
        env=f"  MNIST_NPZ: {data}\n",
    )
    result = cloudtrain("submit", "--config", str(path), timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    (log,) = pod_logs(kube, job_id(output)).values()
    each_once(replica_lines(output, "chief"), log)
    assert re.search(r"^chief\s*\| Test accuracy: [01]\.\d+$", output, re.M), output


class Follower:
    """``cloudtrain ARGS`` in its own process group (as a terminal runs it), its lines read as they come."""

    def __init__(self, *args: str, python: tuple[str, ...] = ("-m", "cloudtrain"), env: dict | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, *python, *args],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        assert self.proc.stdout is not None
        out = self.proc.stdout
        self.reader = threading.Thread(target=lambda: self.lines.extend(iter(out.readline, "")))
        self.reader.start()

    def wait_for(self, pattern: str, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while not any(re.search(pattern, line) for line in self.lines):
            assert time.monotonic() < deadline and self.proc.poll() is None, self.output
            time.sleep(0.1)

    def interrupt(self) -> None:
        os.killpg(self.proc.pid, signal.SIGINT)

    def end(self, timeout: float = 480) -> int:
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.reader.join(timeout=30)
        return code

    @property
    def output(self) -> str:
        return "".join(self.lines)


def test_a_pod_deleted_mid_run_is_replaced_resumes_from_its_checkpoint_and_every_epoch_shows_once(kube, tmp_path):
    """The deleted pod's trainer saves on SIGTERM and exits 5 (preempted): the Job counts it against
    max_restarts and replaces it; the new pod resumes at the saved step and the job succeeds (exit 0)."""
    epochs = 40
    path = tf_config(
        tmp_path,
        replicas=1,
        package=f"  path: {REPO / 'trainer'}\n  module: trainer.task\n",
        args=["--data=digits", f"--epochs={epochs}", "--batch-size=64"],
        extra="  jobset: 'no'\n",
    )
    submit = Follower("submit", "--config", str(path))
    submit.wait_for(rf"^chief\s*\| epoch 2/{epochs}")
    job = job_id(submit.output)
    (first,) = kubectl(kube, "get", "pods", "-l", f"cloudtrain.dev/run={job}", "-o", "name").split()
    kubectl(kube, "delete", first, "--wait=false")
    code = submit.end()
    output = submit.output
    assert code == 0, output
    assert output.count("preemption notice (SIGTERM)") == 1, output
    shown = [
        (m.group(1), int(m.group(2))) for m in re.finditer(rf"^(chief(?:#2)?)\s*\| epoch (\d+)/{epochs} ", output, re.M)
    ]
    assert [e for _, e in shown] == list(range(1, epochs + 1)), output  # each epoch once across the two pods
    assert {r for r, _ in shown} == {"chief", "chief#2"}, output
    (log,) = pod_logs(kube, job).values()  # the replacement (the deleted pod and its log are gone)
    each_once(replica_lines(output, "chief#2"), log)
    resumed = events(log)
    assert resumed["plan"]["resume_step"] > 0 and resumed["done"]["resumed_from_step"] > 0, resumed["plan"]
    status = json.loads(cloudtrain("status", job, "-o", "json").stdout)
    assert status["state"] == "SUCCEEDED" and status["details"]["failed"] == 1, status


def test_a_pod_deleted_with_no_restarts_left_ends_the_job_preempted_with_exit_5(kube, tmp_path):
    path = config(tmp_path, args=["--line", "holding", "--hold"], extra="  jobset: 'no'\n  max_restarts: 0\n")
    submit = Follower("submit", "--config", str(path))
    submit.wait_for(r"^chief\s*\| holding$")
    job = job_id(submit.output)
    (pod,) = kubectl(kube, "get", "pods", "-l", f"cloudtrain.dev/run={job}", "-o", "name").split()
    kubectl(kube, "delete", pod, "--wait=false")
    assert submit.end(timeout=180) == 5, submit.output
    assert re.search(rf"Job {job}: PREEMPTED", submit.output), submit.output
    assert len(re.findall(r"^chief\s*\| holding$", submit.output, re.M)) == 1, submit.output
    why = r"replica chief \(pod \S+ on node-[ab]\) exited 143|Job has reached the specified backoff limit"
    assert re.search(rf"ended PREEMPTED: ({why})", submit.output), submit.output  # the pod named while it is there


TICKS = """\
import os, time
index = int(os.environ["JOB_COMPLETION_INDEX"])
for i in range(120):
    print(f"tick {i} of replica {index}", flush=True)
    time.sleep(0.25)
"""


def restart_apiserver(cluster: Path, kubeconfig: Path) -> None:
    """Stop the cluster's kube-apiserver and start it again with the same command line (cluster.sh's pid file
    follows, so ``down`` stops the new one)."""
    pid_file = cluster / "pids" / "kube-apiserver"
    pid = int(pid_file.read_text())
    argv = [a.decode() for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2)  # the followers see the API gone
    with open(cluster / "logs" / "kube-apiserver.log", "ab") as log:
        server = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
    pid_file.write_text(str(server.pid))
    deadline = time.monotonic() + 120
    while subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), "get", "--raw", "/readyz"]).returncode:
        assert time.monotonic() < deadline, "the API server did not come back"
        time.sleep(0.5)


def test_a_detached_job_is_reattached_by_id_and_every_pods_lines_show_once_across_an_api_server_restart(
    kube, kube_cluster, tmp_path
):
    folder = tmp_path / "script"
    folder.mkdir()
    (folder / "ticks.py").write_text(TICKS)
    path = config(tmp_path, replicas=2, package=f"  path: {folder}\n  script: ticks.py\n", extra="  jobset: 'no'\n")
    submit = cloudtrain("submit", "--config", str(path), "--detach")
    assert submit.returncode == 0, submit.stdout + submit.stderr
    job = job_id(submit.stdout + submit.stderr)
    status = cloudtrain("status", job, "-o", "json", timeout=60)
    assert status.returncode == 0 and json.loads(status.stdout)["state"] in ("PENDING", "RUNNING"), status.stdout
    follow = Follower("logs", "--follow", job)
    follow.wait_for(r"tick 10 of replica 1")
    restart_apiserver(kube_cluster, kube)
    assert follow.end(timeout=300) == 0, follow.output
    for index, replica in ((0, "chief"), (1, "worker-0")):
        ticks = [line for line in replica_lines(follow.output, replica) if line.startswith("tick")]
        assert ticks == [f"tick {i} of replica {index}" for i in range(120)], follow.output
    assert json.loads(cloudtrain("status", job, "-o", "json").stdout)["state"] == "SUCCEEDED"
