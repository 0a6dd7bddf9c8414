"""``secrets:`` on the real cluster: ``shell:`` read where sbatch runs, the value only in a 0600 file,
shown as *** by every follower, the task logs 0600."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.slurm.cluster import LOGIN_SECRET, LOGIN_SECRET_VAR
from tests.slurm.test_submit import cloudtrain, job_id_of, probe_config

pytestmark = [pytest.mark.slow, pytest.mark.server]

TOKEN = "tok-3f9a1c77e2b04d"
API_KEY = "sk-live-9b8c7d6e5f4a3b2c1d0e"


def test_a_shell_secret_reaches_the_tasks_through_a_private_file_and_is_masked(slurm, workdir, tmp_path, monkeypatch):
    monkeypatch.setenv("CT_TEST_TOKEN", TOKEN)
    config = probe_config(tmp_path, workdir, ["--lines=0", "--print-env=HF_TOKEN", "--print-env=API_KEY"])
    config.write_text(config.read_text() + f"secrets:\n  HF_TOKEN: shell:CT_TEST_TOKEN\nenv:\n  API_KEY: {API_KEY}\n")
    dry = cloudtrain("submit", "--config", str(config), "--dry-run", "-o", "json")
    assert dry.returncode == 0 and TOKEN not in dry.stdout + dry.stderr, dry.stdout + dry.stderr
    result = cloudtrain("submit", "--config", str(config))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert out.count("ENV HF_TOKEN=***") == 2 and out.count("ENV API_KEY=***") == 2, out
    assert TOKEN not in out and API_KEY not in out
    job_id = job_id_of(out)
    logs = cloudtrain("logs", job_id).stdout
    assert logs.count("ENV HF_TOKEN=***") == 2 and TOKEN not in logs, logs
    (run,) = (workdir / "runs").iterdir()
    for name in ("job.sh", "tasks.json"):
        assert TOKEN not in (run / "slurm" / name).read_text(), name
    secrets = run / "slurm" / "secrets.json"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert json.loads(secrets.read_text())["env"] == {"HF_TOKEN": TOKEN}
    for log in (run / "slurm" / "r0").glob("task-*.log"):
        assert stat.S_IMODE(log.stat().st_mode) == 0o600, log
        assert f"ENV HF_TOKEN={TOKEN}" in log.read_text()  # the task had the value
    history = cloudtrain("list", "-o", "json").stdout + cloudtrain("status", job_id, "-o", "json").stdout
    assert TOKEN not in history


def test_a_missing_shell_secret_is_one_line_before_anything_is_submitted(slurm, workdir, tmp_path, monkeypatch):
    monkeypatch.delenv("CT_TEST_MISSING", raising=False)
    config = probe_config(tmp_path, workdir, ["--lines=0"])
    config.write_text(config.read_text() + "secrets:\n  HF_TOKEN: shell:CT_TEST_MISSING\n")
    result = cloudtrain("submit", "--config", str(config))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "secrets: HF_TOKEN: shell:CT_TEST_MISSING: $CT_TEST_MISSING is not set on this machine" in result.stderr
    assert slurm.run("squeue", "-h", "-o", "%i").stdout.split() == []


def test_through_the_login_node_a_shell_secret_is_read_there(slurm_login, tmp_path, slurm_image_layer, monkeypatch):
    """The variable is set on the login node only (its sshd's SetEnv), not in this process."""
    monkeypatch.delenv(LOGIN_SECRET_VAR, raising=False)
    workdir = tmp_path / "workdir"
    (workdir / "envs").mkdir(parents=True)
    (workdir / "envs" / slurm_image_layer.name).symlink_to(slurm_image_layer)
    config = probe_config(tmp_path, workdir, ["--lines=0", "--print-env=HF_TOKEN"])
    config.write_text(
        config.read_text().replace("slurm:\n", f"slurm:\n  login: {slurm_login.host}\n")
        + f"secrets:\n  HF_TOKEN: shell:{LOGIN_SECRET_VAR}\n"
    )
    result = cloudtrain("submit", "--config", str(config))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert out.count("ENV HF_TOKEN=***") == 2 and LOGIN_SECRET not in out, out
    (run,) = (workdir / "runs").iterdir()
    assert json.loads((run / "slurm" / "secrets.json").read_text())["env"] == {"HF_TOKEN": LOGIN_SECRET}
    assert stat.S_IMODE((run / "slurm" / "secrets.json").stat().st_mode) == 0o600


def test_a_sweeps_trials_read_one_private_secrets_file_and_show_the_values_masked(
    slurm, workdir, tmp_path, monkeypatch
):
    """A Slurm sweep with ``secrets:``: the values are read at submit, written once to the sweep's 0600
    ``slurm/secrets.json``, read by every array task's trial, shown as ***; no file anyone else can read,
    no batch script and no command line on the machine ever holds them."""
    from tests.slurm.test_sweep_array import sweep_config, wait_for

    monkeypatch.setenv("CT_TEST_TOKEN", TOKEN)
    hold = tmp_path / "hold"
    hold.write_text("0")  # the trials wait while the test reads the processes' command lines
    args = ("--print-env=HF_TOKEN", "--print-env=API_KEY", f"--hold-file={hold}")
    config = sweep_config(tmp_path, workdir, trials=2, parallel=2, args=args)
    config.write_text(config.read_text() + f"secrets:\n  HF_TOKEN: shell:CT_TEST_TOKEN\nenv:\n  API_KEY: {API_KEY}\n")
    started = cloudtrain("submit", "--config", str(config), "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    try:

        def trial_logs_with_a_line() -> bool:
            logs = list(workdir.glob("runs/*/trial-*/slurm/r0/task-0.log"))
            return len(logs) == 2 and all("training with" in log.read_text() for log in logs)

        wait_for(trial_logs_with_a_line, "both trials to print")
        processes = subprocess.run(["ps", "-eww", "-o", "args"], capture_output=True, text=True, check=True).stdout
        assert "sweep_score.task" in processes and TOKEN not in processes and API_KEY not in processes
    finally:
        hold.unlink()
    sweep_id = started.stdout.split("Sweep ", 1)[1].split()[0]
    wait_for(lambda: not slurm.run("squeue", "-h", "-o", "%i").stdout.split(), "the array to end", timeout=300)
    (folder,) = (workdir / "runs").iterdir()
    secrets = folder / "slurm" / "secrets.json"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert json.loads(secrets.read_text()) == {"env": {"HF_TOKEN": TOKEN}, "mask": [TOKEN, API_KEY]}
    holding = set()
    for root, _, names in os.walk(workdir):  # links (the shared envs) not followed
        for path in (Path(root, name) for name in names):
            if path.is_symlink() or not path.is_file():
                continue
            text = path.read_bytes()
            if TOKEN.encode() in text or API_KEY.encode() in text:
                holding.add(path.relative_to(folder).as_posix() if path.is_relative_to(folder) else str(path))
                assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path  # nobody else reads it
    trial_logs = {f"trial-00{n}/slurm/r0/task-0.log" for n in (0, 1)}
    plans = {"slurm/tasks.template.json", *(f"trial-00{n}/slurm/tasks.json" for n in (0, 1))}  # env: API_KEY, 0600
    assert holding <= {"slurm/secrets.json", *trial_logs, *plans}, holding
    assert {"slurm/secrets.json", *trial_logs} <= holding  # the tasks had the value (ENV HF_TOKEN=…)
    for script in ("slurm/array.sh", "slurm/job.template.sh", "trial-000/slurm/job.sh"):
        assert TOKEN not in (folder / script).read_text(), script
    shown = cloudtrain("logs", sweep_id)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("ENV HF_TOKEN=***") == 2 and shown.stdout.count("ENV API_KEY=***") == 2, shown.stdout
    assert TOKEN not in shown.stdout + shown.stderr and API_KEY not in shown.stdout
    results = cloudtrain("sweep", "results", sweep_id, "-o", "json")
    assert [t["state"] for t in json.loads(results.stdout)["trials"]] == ["COMPLETE", "COMPLETE"], results.stderr
