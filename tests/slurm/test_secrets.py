"""``secrets:`` on the real cluster: ``shell:`` read where sbatch runs, the value only in a 0600 file,
shown as *** by every follower, the task logs 0600."""

from __future__ import annotations

import json
import stat

import pytest

from cloudtrain.backends.runner import venv
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


def test_through_the_login_node_a_shell_secret_is_read_there(slurm_login, tmp_path, tf_cache, tf_image, monkeypatch):
    """The variable is set on the login node only (its sshd's SetEnv), not in this process."""
    monkeypatch.delenv(LOGIN_SECRET_VAR, raising=False)
    workdir = tmp_path / "workdir"
    (workdir / "envs").mkdir(parents=True)
    image_layer = venv.image_dir(tf_image, tf_cache)
    assert image_layer.is_dir(), "the test env cache has no image layer yet (another test builds it)"
    (workdir / "envs" / image_layer.name).symlink_to(image_layer)
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
