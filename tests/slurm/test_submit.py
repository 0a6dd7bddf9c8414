"""`cloudtrain submit` on the real test cluster: a user's package across two nodes, failures, cancel."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cloudtrain.backends.slurm.backend import SlurmBackend
from cloudtrain.following.progress import phase_of

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
    return subprocess.run(
        [sys.executable, "-m", "cloudtrain", *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, **kwargs
    )


def probe_config(tmp_path: Path, workdir: Path, args: list[str]) -> Path:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "a.txt").write_text("a")
    path = tmp_path / "probe.yaml"
    path.write_text(
        PROBE_CONFIG.format(
            workdir=workdir, package=REPO / "tests/packages/slurm_probe", data=data, args=json.dumps(args)
        )
    )
    return path


def matched(pattern: str, text: str) -> str:
    """The first group of ``pattern`` (multi-line) in ``text``; the test fails showing ``text`` if it is not there."""
    found = re.search(pattern, text, re.M)
    assert found is not None, f"{pattern!r} not in:\n{text}"
    return found[1]


def job_id_of(output: str) -> str:
    """The Slurm job id a submit printed (``Job 42 created``)."""
    return matched(r"Job (\d+) created", output)


def labelled(output: str) -> list[tuple[str, str]]:
    """(replica, message) of each job line as the follower prints them."""
    return re.findall(r"^\s*\[?([\w?-]+/task-\d+)\]?\s*[:|]?\s*(.*)$", output, re.M)


def test_a_failing_task_fails_the_job_with_exit_1_naming_the_task(slurm, workdir, tmp_path):
    result = cloudtrain("submit", "--config", str(probe_config(tmp_path, workdir, ["--exit=3"])))
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "FAILED" in out and "task 0 on node1 exited with status 3" in out, out


def test_a_request_the_cluster_can_never_run_is_exit_2(slurm, workdir, tmp_path):
    config = probe_config(tmp_path, workdir, [])
    result = cloudtrain("submit", "--config", str(config), "--set", "replica_count=3")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "the cluster can never run this request" in result.stderr
    assert "Traceback" not in result.stderr


def wait_for_text(path: Path, text: str, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while text not in (content := path.read_text() if path.exists() else ""):
        assert time.monotonic() < deadline, content
        time.sleep(0.2)
    return content


def start_submit(config: Path, log: Path, *args: str) -> subprocess.Popen:
    """``cloudtrain submit`` following its job, its output into ``log``."""
    with open(log, "w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "cloudtrain", "submit", "--config", str(config), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO,
        )


def test_ctrl_c_detaches_then_status_logs_list_reattach_and_cancel_130(slurm, workdir, tmp_path):
    """One job: Ctrl-C while following detaches (the job keeps running, the command says how to reattach,
    exit 130); status, logs and both lists see it; the printed reattach command follows it again, and a
    cancel ends that follower with 130; the state outlives the controller's memory of the job."""
    config = probe_config(tmp_path, workdir, ["--sleep=120", "--lines=2"])
    log = tmp_path / "submit.log"
    submit = start_submit(config, log)
    try:
        wait_for_text(log, "line 1 from worker:0")
        text = wait_for_text(log, "line 1 from chief:0")
        job_id = job_id_of(text)
        submit.send_signal(signal.SIGINT)
        assert submit.wait(timeout=60) == 130, log.read_text()
    finally:
        if submit.poll() is None:
            submit.kill()
    text = log.read_text()
    assert f"Detached; job {job_id} keeps running." in text, text
    reattach = matched(r"^\s*reattach: (cloudtrain .*)$", text)
    assert re.search(rf"^\s*cancel:\s+cloudtrain cancel {job_id}$", text, re.M), text
    status = json.loads(cloudtrain("status", job_id, "-o", "json").stdout)
    assert status["state"] == "RUNNING" and status["job_id"] == job_id
    logs = cloudtrain("logs", job_id).stdout
    assert [logs.count(f"line {i} from {me}") for i in (0, 1) for me in ("chief:0", "worker:0")] == [1, 1, 1, 1]
    listed = json.loads(cloudtrain("list", "--backend", "slurm", "--region", "local", "-o", "json").stdout)
    assert [(j["job_id"], j["details"]["cluster"], j["state"], j["native_state"]) for j in listed] == [
        (job_id, "local", "RUNNING", "RUNNING")
    ]
    assert listed[0]["name"].startswith("probe-") and listed[0]["details"]["nodes"] == "node[1-2]"
    history = cloudtrain("list").stdout
    assert re.search(rf"^\s*{job_id}\s.*slurm\s+local", history, re.M), history

    follow_log = tmp_path / "follow.log"
    with open(follow_log, "w") as out:
        follow = subprocess.Popen(
            [sys.executable, "-m", "cloudtrain", *shlex.split(reattach)[1:]],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO,
        )
    try:
        wait_for_text(follow_log, "line 1 from worker:0")
        cancelled = cloudtrain("cancel", job_id)
        assert cancelled.returncode == 0 and "CANCELLED" in cancelled.stdout, cancelled.stdout + cancelled.stderr
        assert follow.wait(timeout=120) == 130, follow_log.read_text()
    finally:
        if follow.poll() is None:
            follow.kill()
    # MinJobAge (5 s) later the controller has forgotten the job: the run folder still says how it ended
    deadline = time.monotonic() + 60
    while slurm.run("scontrol", "show", "job", job_id, check=False).returncode == 0:
        assert time.monotonic() < deadline
        time.sleep(0.5)
    assert json.loads(cloudtrain("status", job_id, "-o", "json").stdout)["state"] == "CANCELLED"


#: The shortest time limit the config takes (more than the warning plus a minute), and the warning's
#: seconds before it: Slurm schedules by whole minutes, so the job gets 3 minutes and is warned
#: 119 s before their end (up to a minute early: the controller checks time limits every 30 s or so).
TIME_LIMIT = "180s"
GRACE_S = 119


def test_max_runtime_warns_the_job_once_the_tasks_stop_and_it_ends_timed_out_124(slurm, workdir, tmp_path):
    """The real time limit (max_runtime → --time, slurm.grace → --signal=B:USR1@grace): Slurm warns the
    batch shell once, the tasks get SIGTERM (the trainer would save a checkpoint), and without
    slurm.requeue the job ends as timed out with the table's 124."""
    config = probe_config(tmp_path, workdir, ["--sleep=600", "--lines=1"])
    config.write_text(
        config.read_text().replace("slurm:\n", f"slurm:\n  grace: {GRACE_S}\n") + f"max_runtime: {TIME_LIMIT}\n"
    )
    log = tmp_path / "submit.log"
    submit = start_submit(config, log)
    try:
        assert submit.wait(timeout=240) == 124, log.read_text()
    finally:
        if submit.poll() is None:
            submit.kill()
    text = log.read_text()
    assert text.count("cloudtrain: USR1 received") == 1, text
    assert "chief:0 got SIGTERM" in text and "worker:0 got SIGTERM" in text, text
    assert "TIMED_OUT" in text and "stopped at the time limit (max_runtime) after the warning" in text, text
    (run,) = (workdir / "runs").iterdir()
    assert (run / "slurm/r0/batch.exit").read_text().strip() == "124"


def test_a_node_set_down_mid_run_ends_the_job_naming_the_node_exit_5(slurm, workdir, tmp_path):
    config = probe_config(tmp_path, workdir, ["--sleep=120", "--lines=2"])
    log = tmp_path / "submit.log"
    with open(log, "w") as out:
        submit = subprocess.Popen(
            [sys.executable, "-m", "cloudtrain", "submit", "--config", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO,
        )
    try:
        wait_for_text(log, "line 1 from worker:0")
        slurm.set_node("node2", "DOWN", reason="test: node lost")
        assert submit.wait(timeout=120) == 5, log.read_text()
    finally:
        if submit.poll() is None:
            submit.kill()
    assert "node node2 failed" in log.read_text(), log.read_text()


def test_a_queued_job_shows_its_pending_reason(slurm, workdir, tmp_path):
    slurm.run("sbatch", "-N2", "--exclusive", "--output=/dev/null", "--wrap", "sleep 120")  # both nodes busy
    result = cloudtrain("submit", "--config", str(probe_config(tmp_path, workdir, [])), "--detach")
    assert result.returncode == 0, result.stdout + result.stderr
    job_id = job_id_of(result.stdout + result.stderr)
    status = SlurmBackend().attach(job_id, region="local", project=str(workdir)).status()
    # Resources, or Priority while an earlier test's job is still ahead in this worker's queue
    reason = status.native_state.removeprefix("PENDING (").removesuffix(")")
    assert reason in ("Resources", "Priority"), status.native_state
    words = {"Resources": "the nodes it needs are busy", "Priority": "jobs of higher priority are ahead of it"}
    assert (status.state.value, status.native_state, status.message) == (
        "PENDING",
        f"PENDING ({reason})",
        f"waiting: {reason}: {words[reason]}",  # the reason in words (docs/how-to/slurm.md)
    )
    assert phase_of(status) == f"queued: {reason}"


SCRIPT = """\
import argparse, json, os

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--model_dir", type=str)
args, _ = parser.parse_known_args()
task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {})
print(f"SCRIPT lr={args.lr} model_dir={args.model_dir} task={task.get('type')}:{task.get('index')}", flush=True)
"""


def test_a_script_runs_on_each_node_with_its_hyperparameters(slurm, workdir, tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "train.py").write_text(SCRIPT)
    config = tmp_path / "script.yaml"
    config.write_text(
        textwrap.dedent(f"""\
        name: script
        backend: slurm
        slurm: {{workdir: {workdir}}}
        replica_count: 2
        machine: {{accelerator_count: 0}}
        package: {{path: {folder}, script: train.py}}
        hyperparameters: {{lr: 0.5}}
        model_dir: true  # Slurm follows Vertex AI's contract: --model_dir only when asked (docs/how-to/script-mode.md)
    """)
    )
    result = cloudtrain("submit", "--config", str(config))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    (run,) = (workdir / "runs").iterdir()
    for me in ("chief:0", "worker:0"):
        assert out.count(f"SCRIPT lr=0.5 model_dir={run}/model/ task={me}") == 1, out
