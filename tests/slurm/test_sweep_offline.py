"""A Slurm sweep offline: what `validate` takes and refuses, the dry run's array, the workdir rule."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

from cloudtrain.backends.slurm import sweep_array, sweep_handle, sweep_trial
from cloudtrain.config.load import load_config
from cloudtrain.errors import ConfigError
from cloudtrain.sweeps.params import format_value
from tests.slurm.test_slurm_config import write_config

SWEEP = {
    "sweep": {
        "metric": "val_accuracy",
        "goal": "maximize",
        "max_trials": 8,
        "parallel_trials": 3,
        "algorithm": "random",
        "params": {"lr": {"min": 0.0001, "max": 0.1, "scale": "log"}, "layers": {"values": [1, 2]}},
    }
}


def test_a_sweep_validates_on_slurm(tmp_path):
    config = load_config(write_config(tmp_path, SWEEP))
    assert config.config.sweep is not None and config.config.sweep.max_trials == 8


def test_early_stopping_is_refused_in_one_line_naming_the_key(tmp_path):
    changes = {"sweep": {**SWEEP["sweep"], "early_stopping": True}}
    with pytest.raises(ConfigError) as info:
        load_config(write_config(tmp_path, changes))
    assert "sweep.early_stopping" in str(info.value) and "remove sweep.early_stopping" in str(info.value)


def test_secrets_in_a_slurm_sweep_validate(tmp_path):
    """The array's tasks read the sweep's one 0600 secrets file (tests/slurm/test_sweep_secrets.py)."""
    config = load_config(write_config(tmp_path, {**SWEEP, "secrets": {"DB_PASSWORD": "shell:DB_PASSWORD"}}))
    assert dict(config.config.secrets) == {"DB_PASSWORD": "shell:DB_PASSWORD"}


def test_the_dry_run_shows_the_array_and_one_trials_job(tmp_path):
    path = write_config(tmp_path, {**SWEEP, "name": "arr"})
    out = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "submit", "--config", str(path), "--dry-run", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    request = json.loads(out.stdout)["request"]
    folder = request["run"]
    assert request["commands"][-1] == f"sbatch --parsable --export=NONE --array=0-7%3 {folder}/slurm/array.sh"
    array = request["batch_script"]
    assert f"#SBATCH --output={folder}/slurm/batch-%A_%a.log" in array
    assert "#SBATCH --nodes=2" in array and "#SBATCH --gpus-per-node=4" in array
    assert '/slurm/sweep_trial.py\' ask "$SWEEP"' in array or '/slurm/sweep_trial.py ask "$SWEEP"' in array
    trial = request["trial_batch_script"]
    assert "RUN=@RUN@" in trial and "@RUN@/slurm/tasks.json" not in trial  # the template names the run once
    assert any("sweep tool" in c and "optuna==" in c for c in request["commands"])


def test_each_trial_gets_its_values_on_the_command_line_as_a_local_trial_would():
    template = json.dumps({"argv": ["python", "-m", "t.task", "--lr=@P:lr@", "--opt=@P:opt@"], "cwd": "@RUN@"})
    values = {"lr": 0.001, "opt": 'a"b', "n": 3.0}
    filled = json.loads(
        sweep_trial.filled(template, "/w/runs/s/trial-004", "s-t004", values, lambda t: json.dumps(t)[1:-1])
    )
    assert filled == {"argv": ["python", "-m", "t.task", "--lr=0.001", '--opt=a"b'], "cwd": "/w/runs/s/trial-004"}
    for value in (0.001, 3.0, 64, True, "adam", 1e-07):
        assert sweep_trial.format_value(value) == format_value(value)


@pytest.mark.parametrize(
    ("fs_type", "nodes", "shared"),
    [
        ("nfs", ["10.0.0.7", "10.0.0.8"], True),
        ("lustre", ["gpu-1"], True),
        ("ext2/ext3", ["127.0.0.1", "127.0.0.1"], True),  # a one-machine cluster: the nodes are the login machine
        ("ext2/ext3", ["10.0.0.7"], False),
        ("xfs", ["127.0.0.1", "10.0.0.8"], False),
        ("tmpfs", [], False),
    ],
)
def test_a_sweep_needs_a_workdir_the_nodes_share(fs_type, nodes, shared):
    why = sweep_array.unshared_reason(fs_type, nodes, {"127.0.0.1", "login-1"})
    assert (why is None) is shared
    if why is not None:
        assert fs_type in why and "the nodes do not see" in why


def test_a_trial_is_found_by_its_array_task_id_through_its_sweep_in_history():
    sweeps = {"41": types.SimpleNamespace(backend="slurm", kind="sweep", region="hpc-login", project="/fsx/ct")}
    find = sweeps.get
    remote = [sweeps["41"]]  # never asked: every id below is decided by history alone
    assert sweep_handle.trial_location("41_3", find, lambda: []) == (
        "41_3",
        {"region": "hpc-login", "project": "/fsx/ct"},
    )
    assert sweep_handle.trial_location("41", find, lambda: remote) is None  # the sweep itself: history finds it
    sweeps["7"] = types.SimpleNamespace(backend="slurm", kind="job", region="local", project="/w")
    assert sweep_handle.trial_location("7_0", find, lambda: remote) is None
    assert sweep_handle.trial_location("7", find, lambda: remote) is None


def test_an_array_a_resume_submitted_and_its_trials_are_found_through_the_sweeps_workdir(tmp_path):
    """History records a sweep's first array; a resumed array is indexed in the sweep's workdir
    (``<workdir>/sweeps/<array>``), where its ids are looked up without --backend or --project."""
    first, other = tmp_path / "first", tmp_path / "other"
    (first / "sweeps").mkdir(parents=True)
    (other / "sweeps").mkdir(parents=True)
    (other / "sweeps" / "58").write_text(f"{other}/runs/s\n")
    kept = [
        types.SimpleNamespace(backend="slurm", kind="sweep", region="local", project=str(first)),
        types.SimpleNamespace(backend="slurm", kind="sweep", region="local", project=str(other)),
        types.SimpleNamespace(backend="slurm", kind="job", region="local", project=str(tmp_path)),
    ]
    find = {"41": kept[0], "50": kept[1]}.get
    assert sweep_handle.trial_location("58_2", find, lambda: kept) == (
        "58_2",
        {"region": "local", "project": str(other)},
    )
    assert sweep_handle.trial_location("58", find, lambda: kept) == ("58", {"region": "local", "project": str(other)})
    assert sweep_handle.trial_location("59_0", find, lambda: kept) is None  # no workdir indexes it
    assert sweep_handle.trial_location("run-58", find, lambda: kept) is None
