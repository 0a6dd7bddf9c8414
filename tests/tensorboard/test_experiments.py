"""``experiment:`` groups runs: recorded in this machine's history at submit for every backend, and
``list --experiment``, ``report --experiment`` and ``tensorboard --experiment`` find its jobs."""

from __future__ import annotations

import json

import pytest

import cloudtrain
from cloudtrain import history
from cloudtrain.app.experiments import experiment_jobs
from cloudtrain.cli import main
from cloudtrain.errors import UsageError
from cloudtrain.history import JobRecord


def _record(job_id: str, experiment: str | None, backend: str = "vertex", kind: str = "job") -> None:
    history.record(
        JobRecord(
            job_id,
            f"projects/p/locations/us-central1/customJobs/{job_id}",
            backend,
            "us-central1",
            "p",
            kind=kind,
            experiment=experiment,
        )
    )


def test_list_experiment_shows_only_its_jobs(capsys) -> None:
    _record("111", "lr-sweep")
    _record("222", "baseline")
    _record("333", "lr-sweep")
    _record("444", None)
    assert main(["list", "--experiment", "lr-sweep", "-o", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(j["job_id"], j["experiment"]) for j in listed] == [("333", "lr-sweep"), ("111", "lr-sweep")]
    assert [j.job_id for j in cloudtrain.jobs(experiment="baseline")] == ["222"]
    assert experiment_jobs("lr-sweep") == ["111", "333"]  # oldest first: the report's order


def test_an_experiment_with_no_jobs_is_one_line_naming_the_known_ones(capsys) -> None:
    _record("111", "lr-sweep")
    _record("222", "baseline")
    with pytest.raises(UsageError) as none:
        experiment_jobs("lr-swep")
    assert str(none.value) == (
        "no jobs of experiment 'lr-swep' in this machine's history — "
        "experiments in this machine's history: baseline, lr-sweep"
    )
    assert main(["report", "--experiment", "lr-swep"]) == 2
    assert main(["tensorboard", "--experiment", "lr-swep"]) == 2
    assert capsys.readouterr().err.splitlines() == [f"error: {none.value}"] * 2


def test_submit_records_the_experiment(tmp_path, monkeypatch) -> None:
    """The record every backend's submit writes (app/launch.remember) carries the config's experiment."""
    from cloudtrain.app.launch import Launched, remember
    from cloudtrain.backends.base import JobState, JobStatus
    from tests.conftest import REPO

    config = cloudtrain.load_config(REPO / "job_configs" / "gpu4.yaml", {"experiment": "exp-7"})
    spec = config.spec
    assert spec.experiment == "exp-7"

    class Handle:
        job_id = "run-1"

    class Prepared:
        loaded = config.loaded

    status = JobStatus("run-1", str(tmp_path / "run-1"), JobState.RUNNING, "running")
    remember(Launched(Handle(), spec, None, status, 0), Prepared())  # type: ignore[arg-type]
    assert history.find("run-1").experiment == "exp-7"  # type: ignore[union-attr]
