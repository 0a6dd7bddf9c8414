"""Ctrl-C at each step of a submit on the real cluster: a recorded job with its reattach and cancel
lines, or no job on the cluster; never a job that runs on with nobody knowing its id."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.slurm.test_submit import REPO, cloudtrain, matched, probe_config

pytestmark = [pytest.mark.slow, pytest.mark.server]

#: A stand-in for a cluster command that sends SIGINT to cloudtrain (its parent) before or after
#: running the real command: the moment a user's Ctrl-C lands in that step.
SHIM = """#!/bin/sh
case " $* " in *" --test-only "*) exec {real} "$@";; esac  # the check before any build: nothing is created
if [ "$CT_INTERRUPT" = "before" ]; then kill -INT $PPID; sleep 0.5; fi
{real} "$@"
rc=$?
if [ "$CT_INTERRUPT" = "after" ]; then kill -INT $PPID; sleep 0.5; fi
exit $rc
"""


def shim_path(tmp_path: Path, command: str, when: str) -> dict[str, str]:
    folder = tmp_path / "shims"
    folder.mkdir()
    real = shutil.which(command)
    assert real is not None
    shim = folder / command
    shim.write_text(SHIM.format(real=real))
    shim.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}", "CT_INTERRUPT": when}


def interrupted(tmp_path: Path, command: str, when: str, *args: str, timeout: int) -> tuple[int, str]:
    """``cloudtrain ARGS`` with ``command`` shimmed to Ctrl-C it ``when``: its exit code and its output."""
    result = subprocess.run(
        [sys.executable, "-m", "cloudtrain", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=shim_path(tmp_path, command, when),
    )
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("command", "when", "created"),
    [
        ("test", "before", False),  # copying the package: nothing exists yet
        ("sbatch", "before", True),  # the job is about to exist: held until it is recorded
        ("sbatch", "after", True),  # sbatch answered: the job id is not lost
        ("scontrol", "after", True),  # the first look at the new job
    ],
)
def test_an_interrupt_at_each_step_of_a_submit_leaves_a_recorded_job_or_none(
    slurm, workdir, tmp_path, command, when, created
):
    config = probe_config(tmp_path, workdir, ["--sleep=300", "--lines=1"])
    code, out = interrupted(tmp_path, command, when, "submit", "--config", str(config), timeout=300)
    assert code == 130, out
    on_cluster = slurm.run("squeue", "-h", "-o", "%i").stdout.split()
    if not created:
        assert on_cluster == [] and "Interrupted." in out, out
        assert not (workdir / "jobs").exists() or list((workdir / "jobs").iterdir()) == []
        return
    assert len(on_cluster) == 1, (on_cluster, out)
    (job_id,) = on_cluster
    assert f"Detached; job {job_id} keeps running." in out, out
    assert re.search(rf"^\s*reattach:\s+cloudtrain logs {job_id} --follow", out, re.M), out
    assert re.search(rf"^\s*cancel:\s+cloudtrain cancel {job_id}$", out, re.M), out
    status = cloudtrain("status", job_id, "-o", "json")
    assert status.returncode == 0, status.stdout + status.stderr
    assert json.loads(status.stdout)["job_id"] == job_id
    (run,) = (workdir / "runs").iterdir()
    assert (workdir / "jobs" / job_id).read_text().strip() == str(run)
    cancelled = cloudtrain("cancel", job_id)
    assert cancelled.returncode == 0, cancelled.stdout + cancelled.stderr


@pytest.mark.parametrize("when", ["before", "after"])
def test_an_interrupt_around_a_sweeps_sbatch_array_leaves_a_recorded_sweep(slurm, workdir, tmp_path, when):
    """A sweep's array is created by ``sbatch --array``: a Ctrl-C just before it or right after it answered is
    held (the one creation window a single job has) until the sweep is in history, then detaches with
    its commands; the array is never left on the cluster with nobody knowing its id."""
    from tests.slurm.test_sweep_array import sweep_config

    hold = tmp_path / "hold"
    hold.write_text("0")  # the trials wait: the array is still there when the test looks
    config = sweep_config(tmp_path, workdir, trials=2, parallel=1, args=(f"--hold-file={hold}",))
    try:
        code, out = interrupted(tmp_path, "sbatch", when, "submit", "--config", str(config), timeout=600)
        assert code == 130, out
        arrays = set(slurm.run("squeue", "-h", "-o", "%F").stdout.split())
        assert len(arrays) == 1, (arrays, out)
        (sweep_id,) = arrays
        assert f"Detached; sweep {sweep_id} keeps running." in out, out
        assert re.search(rf"^\s*cancel:\s+cloudtrain cancel {sweep_id}$", out, re.M), out
        assert re.search(rf"^\s*trials:\s+cloudtrain sweep results {sweep_id}$", out, re.M), out
        status = cloudtrain("status", sweep_id, "-o", "json")
        assert status.returncode == 0, status.stdout + status.stderr
        assert json.loads(status.stdout)["sweep_id"] == sweep_id
        (folder,) = (workdir / "runs").iterdir()
        assert (workdir / "sweeps" / sweep_id).read_text().strip() == str(folder)
        cancelled = cloudtrain("cancel", sweep_id)
        assert cancelled.returncode == 0, cancelled.stdout + cancelled.stderr
    finally:
        hold.unlink(missing_ok=True)


def test_an_interrupt_right_after_a_resumes_sbatch_leaves_the_new_array_in_its_sweep(slurm, workdir, tmp_path):
    """`sweep resume` submits a new array: a Ctrl-C right after `sbatch --array` answered is held until the
    array is in the sweep's folder, so `status` and `cancel` of the sweep reach it."""
    from tests.slurm.test_sweep_array import running_trials, sweep_config, wait_for

    hold = tmp_path / "hold"
    hold.write_text("0")
    config = sweep_config(tmp_path, workdir, trials=2, parallel=1, args=(f"--hold-file={hold}",))
    try:
        started = cloudtrain("submit", "--config", str(config), "--detach")
        assert started.returncode == 0, started.stdout + started.stderr
        sweep_id = matched(r"Sweep (\d+) created", started.stdout)
        wait_for(lambda: running_trials(sweep_id), "the first trial in the journal")
        slurm.run("scancel", sweep_id)
        wait_for(lambda: not slurm.run("squeue", "-h", "-o", "%i").stdout.split(), "the array to end")
        code, out = interrupted(tmp_path, "sbatch", "after", "sweep", "resume", sweep_id, timeout=300)
        assert code == 130 and f"Detached; sweep {sweep_id} keeps running." in out, out
        (array,) = set(slurm.run("squeue", "-h", "-o", "%F").stdout.split())
        (folder,) = (workdir / "runs").iterdir()
        assert (folder / "slurm" / "arrays").read_text().split() == [sweep_id, array]
        status = cloudtrain("status", sweep_id, "-o", "json")
        assert json.loads(status.stdout)["state"] == "RUNNING", status.stdout + status.stderr
        cancelled = cloudtrain("cancel", sweep_id)
        assert cancelled.returncode == 0, cancelled.stdout + cancelled.stderr
        assert slurm.run("squeue", "-h", "-o", "%i").stdout.split() == []
    finally:
        hold.unlink(missing_ok=True)


@pytest.mark.parametrize(
    ("signum", "through_login", "cancel"),
    [
        (signal.SIGINT, False, False),
        (signal.SIGHUP, False, False),
        (signal.SIGINT, True, False),
        (signal.SIGHUP, True, False),
        (signal.SIGINT, True, True),
    ],
    ids=["ctrl-c", "hangup", "ctrl-c-login", "hangup-login", "ctrl-c-login-cancel-on-interrupt"],
)
def test_a_signal_to_the_terminals_process_group_right_after_sbatch_leaves_a_recorded_job(
    slurm, slurm_login, workdir, tmp_path, signum, through_login, cancel
):
    """As a terminal sends them: to the whole foreground process group (cloudtrain, ssh and its master), the
    moment the job is in the queue. The ssh clients ran in that group and died with it: an orphan 6 times of 6."""
    config = probe_config(tmp_path, workdir, ["--sleep=300", "--lines=1"])
    if through_login:
        config.write_text(config.read_text().replace("slurm:\n", f"slurm:\n  login: {slurm_login.host}\n"))
    argv = [
        sys.executable,
        "-m",
        "cloudtrain",
        "submit",
        "--config",
        str(config),
        *(["--cancel-on-interrupt"] * cancel),
    ]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO, preexec_fn=os.setpgrp
    )
    deadline = time.monotonic() + 240
    while not (on_cluster := slurm.run("squeue", "-h", "-o", "%i").stdout.split()):
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()[0] if proc.poll() else ""
        time.sleep(0.05)
    os.killpg(proc.pid, signum)
    out = proc.communicate(timeout=180)[0]
    assert proc.returncode == 130, out
    (job_id,) = on_cluster
    status = cloudtrain("status", job_id, "-o", "json")  # found through history, from any folder
    assert status.returncode == 0, status.stdout + status.stderr + out
    assert json.loads(status.stdout)["job_id"] == job_id
    (run,) = (workdir / "runs").iterdir()
    assert (workdir / "jobs" / job_id).read_text().strip() == str(run)
    if cancel:
        assert json.loads(status.stdout)["state"] == "CANCELLED", out
        return
    assert f"cancel:   cloudtrain cancel {job_id}" in out, out
    assert slurm.run("squeue", "-h", "-j", job_id, "-o", "%T").stdout.strip() in ("PENDING", "RUNNING")
    assert cloudtrain("cancel", job_id).returncode == 0


#: sbatch, then a Ctrl-C as a terminal sends it: to cloudtrain's whole (foreground) process group, the moment
#: the array exists and before cloudtrain has its id in history. The shim runs outside that group (a submit's
#: cluster commands do) and ignores SIGINT in case it did not.
GROUP_SHIM = """#!/bin/sh
trap '' INT
case " $* " in *" --test-only "*) exec {real} "$@";; esac
{real} "$@"
rc=$?
kill -INT -$(awk '{{print $5}}' /proc/$PPID/stat)
sleep 0.5
exit $rc
"""


def test_cancel_on_interrupt_holds_while_a_sweeps_array_is_created(slurm, workdir, tmp_path):
    """``submit --cancel-on-interrupt`` of a sweep, Ctrl-C to the process group right after ``sbatch --array``
    answered: the array is recorded, then cancelled and followed to its end (CANCELLED, 130); nothing of it
    is left on the cluster. It was detached, the array running on."""
    from tests.slurm.test_sweep_array import sweep_config

    hold = tmp_path / "hold"
    hold.write_text("0")  # the trials wait: only a cancel ends them
    config = sweep_config(tmp_path, workdir, trials=2, parallel=2, args=(f"--hold-file={hold}",))
    folder = tmp_path / "shims"
    folder.mkdir()
    (folder / "sbatch").write_text(GROUP_SHIM.format(real=shutil.which("sbatch")))
    (folder / "sbatch").chmod(0o755)
    env = {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}"}
    argv = [sys.executable, "-m", "cloudtrain", "submit", "--config", str(config), "--cancel-on-interrupt"]
    try:
        try:
            proc = subprocess.run(
                argv, capture_output=True, text=True, timeout=600, cwd=REPO, env=env, preexec_fn=os.setpgrp
            )
        except subprocess.TimeoutExpired as hung:
            raise AssertionError(f"hung: {hung.stdout!r} {hung.stderr!r} {slurm.run('squeue', '-h').stdout}") from None
        out = proc.stdout + proc.stderr
        assert proc.returncode == 130, out
        sweep_id = matched(r"Sweep (\d+) created", out)
        assert "keeps running" not in out, out
        deadline = time.monotonic() + 60
        while slurm.run("squeue", "-h", "-o", "%i").stdout.split():  # scancel's end reaches squeue in a moment
            assert time.monotonic() < deadline, slurm.run("squeue", "-h").stdout
            time.sleep(0.5)
        status = cloudtrain("status", sweep_id, "-o", "json")
        assert status.returncode == 0, status.stdout + status.stderr
        assert json.loads(status.stdout)["state"] == "CANCELLED", status.stdout
    finally:
        hold.unlink(missing_ok=True)


#: A cluster command that dies of SIGHUP the first ``{times}`` times it is started, as one does when a terminal's
#: signal to cloudtrain's process group lands between its fork and its ``setsid`` (the child is in that group
#: for that instant, with default handlers: 165 of 400 children of a process group sent SIGHUP every 0.2 ms died
#: so, on Python 3.11). CI saw it once: the write of ``jobs/<id>`` right after sbatch, "failed: " and exit 1.
KILLED_BEFORE_IT_RAN = """#!/bin/sh
echo started >> {log}
[ "$(wc -l < {log})" -gt {times} ] || kill -HUP $$
echo done
"""


@pytest.mark.parametrize("times", [1, 2])
def test_a_command_the_terminals_signal_killed_before_it_ran_is_started_once_more(tmp_path, times):
    from cloudtrain.backends.slurm.shell import ClusterShell
    from cloudtrain.errors import BackendError

    log, command = tmp_path / "log", tmp_path / "command"
    command.write_text(KILLED_BEFORE_IT_RAN.format(log=log, times=times))
    command.chmod(0o755)
    if times == 1:
        assert ClusterShell("").text([str(command)]) == "done\n"
    else:  # killed on both starts: it failed, and says how
        with pytest.raises(BackendError, match=f"^{re.escape(str(command))} failed: exit code -{signal.SIGHUP}$"):
            ClusterShell("").run([str(command)])
    assert log.read_text().count("started") == 2
