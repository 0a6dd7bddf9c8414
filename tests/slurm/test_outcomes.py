"""Outcomes on the real cluster that stay true after the controller forgot the job (no accounting,
``MinJobAge=5``), the failing task named, the last line without a newline shown, drained nodes waited for."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.slurm.test_submit import REPO, cloudtrain, job_id_of, probe_config, wait_for_text

pytestmark = [pytest.mark.slow, pytest.mark.server]


def submit_detached(config: Path, *args: str) -> str:
    result = cloudtrain("submit", "--config", str(config), "--detach", *args)
    assert result.returncode == 0, result.stdout + result.stderr
    return job_id_of(result.stdout + result.stderr)


def forgotten(slurm, job_id: str, timeout: float = 90) -> None:
    """Until the controller no longer knows the job (MinJobAge after its end)."""
    deadline = time.monotonic() + timeout
    while slurm.run("scontrol", "show", "job", job_id, check=False).returncode == 0:
        assert time.monotonic() < deadline, slurm.run("scontrol", "show", "job", job_id).stdout
        time.sleep(0.5)


def run_files(workdir: Path) -> str:
    """The run folder's small files, for a failing assertion's message."""
    (run,) = (workdir / "runs").iterdir()
    return "\n".join(
        f"{p.relative_to(run)}: {p.read_text(errors='replace')[-300:]}"
        for p in sorted((run / "slurm").rglob("*"))
        if p.is_file() and p.name not in ("tasks.json", "launcher.py", "job.sh")
    )


def status_of(job_id: str) -> dict:
    result = cloudtrain("status", job_id, "-o", "json")
    return json.loads(result.stdout)


def task_log(workdir: Path, task: int) -> Path:
    (run,) = (workdir / "runs").iterdir()
    return run / "slurm" / "r0" / f"task-{task}.log"


def test_a_plain_scancel_stays_cancelled_130_after_the_controller_forgot_the_job(slurm, workdir, tmp_path):
    """Nobody watched the job: only the batch shell's own record says Slurm cancelled it."""
    job_id = submit_detached(probe_config(tmp_path, workdir, ["--sleep=120", "--lines=1"]))
    wait_for_text(task_log(workdir, 1), "line 0 from worker:0")
    slurm.run("scancel", job_id)
    forgotten(slurm, job_id)
    for _ in range(2):  # a second reading agrees with the first
        status = status_of(job_id)
        assert (status["state"], status["message"]) == ("CANCELLED", "cancelled (scancel)"), (
            status,
            run_files(workdir),
        )
    follow = cloudtrain("logs", job_id, "--follow")
    assert follow.returncode == 130, follow.stdout + follow.stderr


def test_a_job_scancelled_while_pending_stays_cancelled_130_after_the_controller_forgot_it(slurm, workdir, tmp_path):
    """It never started: no batch shell kept a record, only the missing batch log says so (was FAILED, exit 1)."""
    config = probe_config(tmp_path, workdir, ["--lines=1"])
    config.write_text(config.read_text().replace("  partition: debug\n", '  partition: debug\n  sbatch: ["--hold"]\n'))
    job_id = submit_detached(config)
    slurm.run("scancel", job_id)
    forgotten(slurm, job_id)
    for _ in range(2):  # the second reading is the one kept in outcome.json
        status = status_of(job_id)
        assert (status["state"], status["message"]) == ("CANCELLED", "cancelled before it started"), status
    follow = cloudtrain("logs", job_id, "--follow")
    assert follow.returncode == 130, follow.stdout + follow.stderr


def test_a_node_set_down_stays_node_failed_5_after_the_controller_forgot_the_job(slurm, workdir, tmp_path):
    job_id = submit_detached(probe_config(tmp_path, workdir, ["--sleep=120", "--lines=1"]))
    wait_for_text(task_log(workdir, 1), "line 0 from worker:0")
    slurm.set_node("node2", "DOWN", reason="test: node lost")
    forgotten(slurm, job_id)
    for _ in range(2):
        status = status_of(job_id)
        assert status["state"] == "PREEMPTED" and "node2 failed" in status["message"], (status, run_files(workdir))
    follow = cloudtrain("logs", job_id, "--follow")
    assert follow.returncode == 5, follow.stdout + follow.stderr


def test_the_first_task_to_fail_is_named_with_its_signal_and_last_lines(slurm, workdir, tmp_path):
    """kill -9 of the worker's program: the worker is blamed (SIGKILL, 137), not the chief that failed after it."""
    pids = tmp_path / "pids"
    pids.mkdir()
    peer_gone = tmp_path / "peer-gone"
    args = ["--sleep=120", "--lines=2", "--exit=1", f"--pids={pids}", f"--until={peer_gone}"]
    log = tmp_path / "submit.log"
    with open(log, "w") as out:
        submit = subprocess.Popen(
            [sys.executable, "-m", "cloudtrain", "submit", "--config", str(probe_config(tmp_path, workdir, args))],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO,
        )
    try:
        wait_for_text(log, "line 1 from worker:0")
        deadline = time.monotonic() + 60
        while not (pids / "worker:0.pid").exists():
            assert time.monotonic() < deadline
            time.sleep(0.2)
        subprocess.run(["kill", "-9", (pids / "worker:0.pid").read_text()], check=True)
        time.sleep(1)
        peer_gone.touch()  # the chief notices its peer is gone and fails (exit 1) after it
        assert submit.wait(timeout=120) == 1, log.read_text()
    finally:
        if submit.poll() is None:
            submit.kill()
    text = log.read_text()
    assert "task 1 on node2 was killed by SIGKILL (status 137)" in text, text
    assert "node2/task-1: line 1 from worker:0" in text, text  # its last lines


def test_a_last_line_without_a_newline_is_shown_by_submit_logs_and_follow(slurm, workdir, tmp_path):
    config = probe_config(tmp_path, workdir, ["--lines=1", "--last=the end, no newline"])
    result = cloudtrain("submit", "--config", str(config))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert shown_last(out) == ["node1/task-0", "node2/task-1"], out  # chief and worker
    job_id = job_id_of(out)
    logs = cloudtrain("logs", job_id).stdout
    assert shown_last(logs) == ["node1/task-0", "node2/task-1"], logs
    follow = cloudtrain("logs", job_id, "--follow").stdout
    assert shown_last(follow) == ["node1/task-0", "node2/task-1"], follow


def shown_last(output: str) -> list[str]:
    """The tasks whose last line (printed without a newline) was shown, as the follower labels them."""
    return sorted(re.findall(r"^\s*\[?(node\d/task-\d)\]?\s*[:|]?\s*the end, no newline$", output, re.M))


def test_a_drained_node_keeps_the_job_pending_with_its_reason(slurm, workdir, tmp_path):
    slurm.set_node("node2", "DRAIN", reason="maintenance")
    try:
        job_id = submit_detached(probe_config(tmp_path, workdir, ["--lines=1"]))
        status = status_of(job_id)
        assert status["state"] == "PENDING", status
        # ReqNodeNotAvail in words, as scontrol gives it before or after the scheduler describes it
        assert status["message"] in (
            "waiting: nodes required for the job are down, drained or reserved (unavailable: node2)",
            "waiting: nodes required for the job are down, drained or reserved",
        ), status
    finally:
        slurm.set_node("node2", "RESUME")
    deadline = time.monotonic() + 120
    while (state := status_of(job_id)["state"]) not in ("RUNNING", "SUCCEEDED"):
        assert time.monotonic() < deadline, state  # node2 is back: the job runs
        time.sleep(1)


def test_logs_json_gives_each_line_the_time_it_was_printed_not_read(slurm, workdir, tmp_path):
    config = probe_config(tmp_path, workdir, ["--lines=2", "--interval=3"])
    result = cloudtrain("submit", "--config", str(config))
    assert result.returncode == 0, result.stdout + result.stderr
    job_id = job_id_of(result.stdout + result.stderr)
    time.sleep(2)
    asked = time.time()
    lines = [json.loads(line) for line in cloudtrain("logs", job_id, "-o", "json").stdout.splitlines()]
    chief = {
        r["message"]: dt.datetime.fromisoformat(r["timestamp"]).timestamp()
        for r in lines
        if r["message"].startswith("line ") and "chief" in r["message"]
    }
    assert set(chief) == {"line 0 from chief:0", "line 1 from chief:0"}, lines
    assert chief["line 1 from chief:0"] - chief["line 0 from chief:0"] >= 2.5  # printed 3 s apart
    assert chief["line 1 from chief:0"] < asked - 1.5  # not the read's time


def test_a_reattached_follower_reports_no_false_queued_time(slurm, workdir, tmp_path):
    """The job ran at once on an idle cluster; a follower attached 10 s into its run must not count those
    10 s as queued (its lines carry the time they were printed, not the time it read them)."""
    job_id = submit_detached(probe_config(tmp_path, workdir, ["--sleep=20", "--lines=1"]))
    wait_for_text(task_log(workdir, 0), "line 0 from chief:0")
    time.sleep(10)
    follow = cloudtrain("logs", job_id, "--follow")
    out = follow.stdout + follow.stderr
    assert follow.returncode == 0, out
    timeline = re.search(r"^timeline: (.*)$", out, re.M)
    assert timeline is not None, out
    queued = re.search(r"queued (\d+) s", timeline[1])
    assert queued is None or int(queued[1]) < 5, timeline[1]


def test_a_hard_time_limit_stays_timed_out_124_after_the_controller_forgot_the_job(slurm, workdir, tmp_path):
    """Tasks that ignore the warning run into the hard limit (cut to 1 min once running); nobody watched."""
    job_id = submit_detached(probe_config(tmp_path, workdir, ["--sleep=600", "--lines=1", "--ignore-term"]))
    wait_for_text(task_log(workdir, 1), "line 0 from worker:0")
    slurm.run("scontrol", "update", f"JobId={job_id}", "TimeLimit=1")
    forgotten(slurm, job_id, timeout=240)
    for _ in range(2):
        status = status_of(job_id)
        assert (status["state"], status["message"]) == ("TIMED_OUT", "stopped at the hard time limit"), (
            status,
            run_files(workdir),
        )
    follow = cloudtrain("logs", job_id, "--follow")
    assert follow.returncode == 124, follow.stdout + follow.stderr


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("slurm.partition=nosuch", "Invalid partition name specified"),
        ("slurm.constraint=nosuchfeature", "Invalid feature specification"),
        ("replica_count=3", "pending with reason PartitionConfig"),  # more nodes than the partition has
    ],
)
def test_what_the_cluster_can_never_run_is_refused_with_exit_2_and_no_job(slurm, workdir, tmp_path, override, words):
    result = cloudtrain("submit", "--config", str(probe_config(tmp_path, workdir, [])), "--set", override)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "the cluster can never run this request" in result.stderr and words in result.stderr, result.stderr
    assert slurm.run("squeue", "-h", "-t", "pending,running", "-o", "%i").stdout.split() == []  # none left waiting
