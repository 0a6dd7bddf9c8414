"""A dry-run's summary as people write it: durations in minutes and hours (``20 min``, not
``0.333333 h``), ``1 replica``, the GPUs named in the cost line, and no ``(from None)``."""

from __future__ import annotations

import pytest

from cloudtrain.cli import main
from cloudtrain.text.numbers import duration
from tests.conftest import REPO

CONFIG = """\
name: words
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
machine: {machine}
package: {{path: {trainer}, module: trainer.task}}
args: [--batch-size=32]
replica_count: {replicas}
max_runtime: {runtime}
"""
N1_T4 = "{type: n1-standard-16, accelerator: NVIDIA_TESLA_T4, accelerator_count: 4}"


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (45, "45 s"),
        (60, "1 min"),
        (1200, "20 min"),
        (1199.9988, "20 min"),  # what 0.333333 h was
        (3599, "1 h"),
        (5400, "1 h 30 min"),
        (7260, "2 h 1 min"),
        (86400, "24 h"),
        (190800, "2 d 5 h"),
        (28 * 86400, "28 d"),
    ],
)
def test_durations_are_written_in_whole_units(seconds, words) -> None:
    assert duration(seconds) == words


def _summary(tmp_path, capsys, *args: str, machine: str = N1_T4, replicas: int = 1, runtime: str = "20m") -> dict:
    path = tmp_path / "job.yaml"
    path.write_text(CONFIG.format(machine=machine, trainer=REPO / "trainer", replicas=replicas, runtime=runtime))
    assert main(["submit", "--config", str(path), "--dry-run", *args]) == 0
    out = capsys.readouterr().out
    return dict(line.split(": ", 1) for line in out.splitlines() if ": " in line and not line.startswith(" "))


def test_a_short_runtime_is_in_minutes_and_the_cost_line_names_the_attached_gpus(tmp_path, capsys) -> None:
    rows = _summary(tmp_path, capsys)
    assert rows["cost/hour"] == "$2.48 for 1 × n1-standard-16 + 4 × T4 (us-central1 on-demand list price, 2025-01)"
    assert rows["cost cap"] == "$0.83 if it runs until max_runtime (20 min)"
    assert rows["batch"] == "global 128 = 32 per replica × 4 replicas (GPUs × machines)"


def test_several_machines_each_with_gpus_and_a_runtime_in_hours_and_minutes(tmp_path, capsys) -> None:
    rows = _summary(tmp_path, capsys, replicas=2, runtime="90m")
    assert rows["cost/hour"].startswith("$4.97 for 2 × (n1-standard-16 + 4 × T4) (")
    assert rows["cost cap"] == "$7.45 if it runs until max_runtime (1 h 30 min)"


def test_one_cpu_replica_is_one_replica_and_a_budget_cut_is_in_minutes(tmp_path, capsys) -> None:
    rows = _summary(tmp_path, capsys, "--set", "budget.max_usd=0.1", machine="{type: n1-standard-4}", runtime="2h")
    assert rows["batch"] == "global 32 = 32 per replica × 1 replica (GPUs × machines)"
    assert rows["cost/hour"] == "$0.22 for 1 × n1-standard-4 (us-central1 on-demand list price, 2025-01)"
    assert rows["cost cap"] == "$0.10: max_runtime 27 min, cut to fit budget.max_usd $0.10"  # $0.10 / $0.2185 per h


def test_built_in_gpus_are_named_with_the_instance(capsys) -> None:
    assert main(["submit", "--config", str(REPO / "job_configs" / "sagemaker-gpu4.yaml"), "--dry-run"]) == 0
    rows = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines() if ": " in line)
    assert rows["cost/hour"].startswith("$4.89 for 1 × ml.g4dn.12xlarge (4 × T4) (us-east-1 ")


def test_a_config_moved_to_sagemaker_shows_no_project(capsys) -> None:
    args = ["--set", "backend=sagemaker", "--set", "role_arn=arn:aws:iam::123456789012:role/R"]
    args += ["--set", "staging_bucket=s3://my-bucket"]
    assert main(["submit", "--config", str(REPO / "job_configs" / "gpu4.yaml"), "--dry-run", *args]) == 0
    out = capsys.readouterr().out
    assert "(from None)" not in out
    assert [line for line in out.splitlines() if line.startswith("project")] == []
    assert main(["submit", "--config", str(REPO / "job_configs" / "gpu4.yaml"), "--dry-run"]) == 0
    native = capsys.readouterr().out
    assert "project: my-project (from " in native and "gpu4.yaml:" in native  # Vertex AI keeps it, with its line


def test_a_one_trial_sweep_is_one_trial(capsys) -> None:
    sweep = str(REPO / "job_configs" / "sweep.yaml")
    args = ["--set", "sweep.max_trials=1", "--set", "sweep.parallel_trials=1"]
    assert main(["submit", "--config", sweep, "--dry-run", *args]) == 0
    rows = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines() if ": " in line)
    assert rows["sweep"].startswith("maximize val_accuracy over lr, batch-size, optimizer: 1 trial, ")
    assert rows["cost cap"].startswith("$20.15 per trial, $20.15 for the sweep's 1 trial if it runs until")
