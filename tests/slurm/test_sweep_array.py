"""Sweeps on the real test cluster: a user's script (no TensorFlow) swept as one job array.

Each array task asks Optuna for its trial through the journal on the shared workdir, runs the trial
as one job runs, and tells the result; ``sweep results``, ``status``, ``logs``, ``cancel`` (the whole
array or one trial) and ``sweep resume`` after a kill read and act on the cluster."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.slurm.test_submit import matched

REPO = Path(__file__).resolve().parents[2]
SWEEP_SCORE = REPO / "tests" / "packages" / "sweep_score"
pytestmark = [pytest.mark.slow, pytest.mark.server]


def cloudtrain(*args: str, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cloudtrain", *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, **kwargs
    )


def sweep_config(
    tmp_path: Path,
    workdir: Path,
    *,
    trials: int = 3,
    parallel: int = 2,
    args: tuple[str, ...] = (),
    login: str = "",
    lr: str = "{min: 0.0001, max: 1.0, scale: log}",
    more: str = "",
) -> Path:
    shutil.copytree(SWEEP_SCORE, tmp_path / "sweep_score")
    path = tmp_path / "sweep.yaml"
    path.write_text(
        textwrap.dedent(f"""
        name: score-array
        backend: slurm
        slurm: {{workdir: {workdir}, partition: debug, login: "{login}"}}
        replica_count: 1
        machine: {{accelerator_count: 0}}
        package: {{path: sweep_score, module: sweep_score.task}}
        args: {json.dumps(list(args))}
        max_runtime: 10m
        sweep:
          metric: score
          goal: maximize
          max_trials: {trials}
          parallel_trials: {parallel}
          algorithm: random
          seed: 3
          params:
            lr: {lr}
        """)
        + more
    )
    return path


def results_of(sweep_id: str) -> dict:
    out = cloudtrain("sweep", "results", sweep_id, "-o", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_sweep_runs_its_trials_as_one_job_array(slurm, workdir, tmp_path):
    config = sweep_config(tmp_path, workdir, trials=3, parallel=2)
    done = cloudtrain("submit", "--config", str(config))
    assert done.returncode == 0, done.stdout + done.stderr
    sweep_id = matched(r"Sweep (\d+) created", done.stdout)
    table = results_of(sweep_id)
    assert table["state"] == "SUCCEEDED" and len(table["trials"]) == 3
    for trial in table["trials"]:
        assert trial["state"] == "COMPLETE"
        assert trial["value"] == pytest.approx(-((math.log10(trial["params"]["lr"]) + 2) ** 2))
        assert re.fullmatch(rf"{sweep_id}_\d", trial["job_id"])
    # every trial's lines as it ran, labelled by its trial, in the submit's output and in `logs SWEEP`
    for number, trial in enumerate(sorted(table["trials"], key=lambda t: int(t["trial"]))):
        assert re.search(
            rf"^t{number:03d}/node\d/task-0\s*\| training with lr={trial['params']['lr']}$", done.stdout, re.M
        )
    logs = cloudtrain("logs", sweep_id)
    assert logs.returncode == 0, logs.stderr
    assert len(re.findall(r"^t00\d/node\d/task-0\s*\| training with lr=", logs.stdout, re.M)) == 3
    records = [json.loads(line) for line in cloudtrain("logs", sweep_id, "-o", "json").stdout.splitlines()]
    trained = sorted((r["trial"], r["message"]) for r in records if r["message"].startswith("training with"))
    assert trained == sorted((t["trial"], f"training with lr={t['params']['lr']}") for t in table["trials"])
    status = cloudtrain("status", sweep_id, "-o", "json")
    assert json.loads(status.stdout)["trials"] == {"COMPLETE": 3}, status.stdout + status.stderr
    best = max(table["trials"], key=lambda t: t["value"])
    assert json.loads(status.stdout)["best_trial"] == best["trial"]
    listed = json.loads(cloudtrain("list", "-o", "json").stdout)
    mine = next(j for j in listed if j["job_id"] == sweep_id)
    assert mine["kind"] == "sweep" and mine["backend"] == "slurm" and mine["state"].startswith("SUCCEEDED: 3/3 trials")
    # one trial by its Slurm id (array_task): found through its sweep in history
    trial = cloudtrain("status", best["job_id"], "-o", "json")
    assert trial.returncode == 0, trial.stderr
    assert json.loads(trial.stdout)["state"] == "SUCCEEDED"
    assert json.loads(trial.stdout)["details"]["run"].endswith(f"/trial-{int(best['trial']):03d}")


def wait_for(check, what: str, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def running_trials(sweep_id: str) -> list[dict]:
    return [t for t in results_of(sweep_id)["trials"] if t["state"] == "RUNNING"]


def held(workdir: Path) -> list[Path]:
    """The trial folders whose script is waiting on its hold file."""
    return [
        log.parents[2]
        for log in workdir.glob("runs/*/trial-*/slurm/r0/task-0.log")
        if "training with" in log.read_text()
    ]


@pytest.mark.parametrize("how", ["cloudtrain cancel", "scancel"])
def test_a_stopped_sweep_resumes_its_interrupted_trial_under_its_own_number(how, slurm, workdir, tmp_path):
    """A kill (scancel of the array) or `cloudtrain cancel SWEEP` leaves the running trial RUNNING, not FAIL;
    `sweep resume` runs it again with its own parameters, then the trials still to run."""
    hold = tmp_path / "hold"
    hold.write_text("1")  # the first trial passes, the second waits
    config = sweep_config(tmp_path, workdir, trials=3, parallel=1, args=(f"--hold-file={hold}",))
    started = cloudtrain("submit", "--config", str(config), "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    sweep_id = matched(r"Sweep (\d+) created", started.stdout)
    wait_for(lambda: len(held(workdir)) == 2, "the second trial to start")
    before = wait_for(lambda: running_trials(sweep_id), "the held trial in the journal")
    if how == "scancel":
        subprocess.run(["scancel", sweep_id], check=True)
        wait_for(
            lambda: not subprocess.run(["squeue", "-h", "-j", sweep_id], capture_output=True, text=True).stdout.strip(),
            "the array to end",
        )
    else:
        cancelled = cloudtrain("cancel", sweep_id)
        assert cancelled.returncode == 0, cancelled.stdout + cancelled.stderr
        assert f"Sweep {sweep_id}: CANCELLED" in cancelled.stdout
    stopped = results_of(sweep_id)
    assert stopped["state"] in ("STOPPED", "CANCELLED")
    assert [t["state"] for t in stopped["trials"]] == ["COMPLETE", "INTERRUPTED"]
    status = cloudtrain("status", sweep_id, "-o", "json")
    assert json.loads(status.stdout)["trials"] == {"COMPLETE": 1, "INTERRUPTED": 1}
    hold.unlink()
    resumed = cloudtrain("sweep", "resume", sweep_id)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    # the attached resume streams the rerun's lines (its metric: the interrupted run never printed one)
    rerun = [line for line in resumed.stdout.splitlines() if f"t{int(before[0]['trial']):03d}/" in line]
    assert any("score" in line for line in rerun), resumed.stdout
    table = results_of(sweep_id)
    assert table["state"] == "SUCCEEDED"
    assert [t["state"] for t in table["trials"]] == ["COMPLETE"] * 3
    again = next(t for t in table["trials"] if t["trial"] == before[0]["trial"])
    assert again["params"] == before[0]["params"] and again["job_id"] != before[0]["job_id"]
    # the resumed array's ids, which history never recorded, are found with no --backend or --project
    array = again["job_id"].split("_")[0]
    assert array != sweep_id
    trial = cloudtrain("status", again["job_id"], "-o", "json")
    assert trial.returncode == 0, trial.stdout + trial.stderr
    assert json.loads(trial.stdout)["state"] == "SUCCEEDED"
    assert json.loads(trial.stdout)["details"]["run"].endswith(f"/trial-{int(again['trial']):03d}")
    logs = cloudtrain("logs", again["job_id"])
    assert logs.returncode == 0 and f"training with lr={again['params']['lr']}" in logs.stdout, logs.stderr
    whole = cloudtrain("status", array, "-o", "json")  # the array itself: its sweep, under the sweep's id
    assert whole.returncode == 0, whole.stdout + whole.stderr
    assert json.loads(whole.stdout)["job_id"] == sweep_id and json.loads(whole.stdout)["state"] == "SUCCEEDED"
    assert results_of(array) == table  # `sweep results` (and `sweep resume`) by the later array's id: the sweep


def test_a_running_trials_lines_show_while_it_runs(slurm, workdir, tmp_path):
    """An attached submit shows a trial's lines as they come (the single job's follower, one per trial),
    not once the trial ended: its first line is on the screen while the trial still waits on its hold
    file; each line once. The trials' followers ask the controller nothing of their own: the sweep's
    one ``squeue`` a round says when a trial ended (no ``scontrol show job`` from the watcher)."""
    hold = tmp_path / "hold"
    hold.write_text("0")  # the trial prints its first line, then waits until the file goes
    config = sweep_config(tmp_path, workdir, trials=1, parallel=1, args=(f"--hold-file={hold}",))
    shims, asked = tmp_path / "shims", tmp_path / "scontrol-calls"
    shims.mkdir()
    (shims / "scontrol").write_text(f'#!/bin/sh\necho "$*" >> {asked}\nexec {shutil.which("scontrol")} "$@"\n')
    (shims / "scontrol").chmod(0o755)
    submit = subprocess.Popen(
        [sys.executable, "-m", "cloudtrain", "submit", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPO,
        env={**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"},
    )
    seen: list[str] = []
    assert submit.stdout is not None
    reader = threading.Thread(target=lambda out=submit.stdout: seen.extend(iter(out.readline, "")), daemon=True)
    reader.start()
    try:
        line = wait_for(
            lambda: next((x for x in list(seen) if re.match(r"^t000/node\d/task-0\s*\| training with lr=", x)), None),
            "the running trial's first line",
        )
        sweep_id = matched(r"Sweep (\d+) created", "".join(seen))
        assert hold.exists() and [t["trial"] for t in running_trials(sweep_id)] == ["0"], line  # still running
    finally:
        hold.unlink(missing_ok=True)
    assert submit.wait(timeout=300) == 0, "".join(seen)
    reader.join(timeout=30)
    out = "".join(seen)
    assert len(re.findall(r"^t000/node\d/task-0\s*\| training with lr=", out, re.M)) == 1, out
    calls = asked.read_text().splitlines() if asked.exists() else []
    assert calls and not [c for c in calls if c.startswith("show job")], calls  # `show node`: the workdir check


def test_one_trial_is_cancelled_by_its_slurm_id_and_the_sweep_goes_on(slurm, workdir, tmp_path):
    hold = tmp_path / "hold"
    hold.write_text("0")  # every trial waits until the file goes
    config = sweep_config(tmp_path, workdir, trials=2, parallel=1, args=(f"--hold-file={hold}",))
    started = cloudtrain("submit", "--config", str(config), "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    sweep_id = matched(r"Sweep (\d+) created", started.stdout)
    wait_for(lambda: held(workdir), "the first trial to start")
    first = wait_for(lambda: running_trials(sweep_id), "the first trial in the journal")[0]
    cancelled = cloudtrain("cancel", first["job_id"])
    assert cancelled.returncode == 0, cancelled.stdout + cancelled.stderr
    wait_for(lambda: len(held(workdir)) == 2, "the second trial to start")
    hold.unlink()
    table = wait_for(lambda: (r := results_of(sweep_id))["state"] == "SUCCEEDED" and r, "the sweep to end")
    assert [(t["state"], t["message"]) for t in table["trials"]] == [("FAIL", "cancelled"), ("COMPLETE", None)]


def test_a_sweep_through_the_login_node(slurm_login, workdir, tmp_path):
    """Both environments built on the login node (envbuild.py over ssh), the array submitted and read there."""
    config = sweep_config(tmp_path, workdir, trials=2, parallel=2, login=slurm_login.host)
    done = cloudtrain("submit", "--config", str(config))
    assert done.returncode == 0, done.stdout + done.stderr
    sweep_id = matched(r"Sweep (\d+) created", done.stdout)
    table = results_of(sweep_id)
    assert table["state"] == "SUCCEEDED" and [t["state"] for t in table["trials"]] == ["COMPLETE"] * 2
    status = cloudtrain("status", table["trials"][0]["job_id"], "-o", "json")
    assert json.loads(status.stdout)["details"]["cluster"] == slurm_login.host, status.stderr


def test_a_failing_trial_is_fail_with_its_exit_status_and_max_failed_trials_stops_the_array(slurm, workdir, tmp_path):
    """`--lr=abc` makes the user's argparse exit 2: the trial is FAIL naming it; after max_failed_trials (1)
    the array's pending trials are cancelled, and the sweep says how many did not run and how to go on."""
    more = "  max_failed_trials: 1\n"
    config = sweep_config(tmp_path, workdir, trials=3, parallel=1, lr="{values: [abc, xyz]}", more=more)
    done = cloudtrain("submit", "--config", str(config))
    assert done.returncode == 1, done.stdout + done.stderr
    sweep_id = matched(r"Sweep (\d+) created", done.stdout)
    table = results_of(sweep_id)
    assert [(t["state"], t["message"]) for t in table["trials"]] == [("FAIL", "exit status 2")]
    assert f"2 of 3 trials did not finish: cloudtrain sweep resume {sweep_id}" in done.stdout
