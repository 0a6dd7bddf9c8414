"""What a task finds when its code starts on the real cluster: the contract's folders made, no login
profile from ``--export=NONE``, a working folder in the run's slurm/ (no local-run/); and ``list`` with
the state of running Slurm jobs and the columns the docs promise."""

from __future__ import annotations

import json
import re

import pytest

from tests.slurm.test_submit import cloudtrain, job_id_of, probe_config, wait_for_text

pytestmark = [pytest.mark.slow, pytest.mark.server]


def test_the_task_starts_in_a_clean_environment_with_the_contracts_folders_made(slurm, workdir, tmp_path):
    config = probe_config(tmp_path, workdir, ["--lines=0", "--check-dirs"])
    result = cloudtrain("submit", "--config", str(config))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    (run,) = (workdir / "runs").iterdir()
    found = re.findall(r"(node\d/task-\d) \| DIRS (\{.*?\}) CWD (\S+) ENV (\[.*\])$", out, re.M)
    assert sorted(f[0] for f in found) == ["node1/task-0", "node2/task-1"], out
    for _, dirs, cwd, env in found:
        assert json.loads(dirs) == {"AIP_CHECKPOINT_DIR": True, "AIP_MODEL_DIR": True, "AIP_TENSORBOARD_LOG_DIR": True}
        assert cwd.startswith(f"{run}/slurm/work/"), cwd
        names = json.loads(env)
        assert "SLURM_GET_USER_ENV" not in names, names  # --export=NONE's login profile is not loaded
        assert not [n for n in names if n.startswith(("PYENV", "CONDA", "VIRTUAL_ENV"))], names
    assert not (run / "local-run").exists()
    assert "image: none: TensorFlow" in out and "vertex-ai" not in out, out


def test_list_shows_the_state_of_running_slurm_jobs_and_the_cluster_columns(slurm, workdir, tmp_path):
    result = cloudtrain("submit", "--config", str(probe_config(tmp_path, workdir, ["--sleep=120"])), "--detach")
    job_id = job_id_of(result.stdout + result.stderr)
    (run,) = (workdir / "runs").iterdir()
    wait_for_text(run / "slurm" / "r0" / "task-0.log", "line 0 from chief:0")
    history = json.loads(cloudtrain("list", "-o", "json").stdout)
    assert [(j["job_id"], j["state"]) for j in history if j["job_id"] == job_id] == [(job_id, "RUNNING")]
    table = cloudtrain("list", "--backend", "slurm", "--region", "local").stdout
    header = table.splitlines()[0].split()
    assert header[:5] == ["job", "state", "cluster", "partition", "nodes"], table
    assert re.search(rf"^\s*{job_id}\s+RUNNING\s+local\s+debug\s+node\[1-2\]\s", table, re.M), table
    cloudtrain("cancel", job_id)
