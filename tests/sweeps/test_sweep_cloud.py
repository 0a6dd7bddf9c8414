"""Sweeps created on the real servers: moto (SageMaker) and the Vertex JobService fake; results read back."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.backends.sagemaker.tuning_jobs import SageMakerSweep
from cloudtrain.config.load import load_config
from cloudtrain.spec import build_spec
from tests.fakes.aws import TUNING_TRIALS, MotoAws, add_tuning_actions

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[2]


def test_sagemaker_sweep_is_created_and_its_trials_read_back(aws: MotoAws, build_package) -> None:
    from tests.sweeps.test_sweep_requests import SAGEMAKER

    add_tuning_actions()
    aws.client("s3", "us-east-1").create_bucket(Bucket="my-bucket")
    spec = build_spec(load_config(ROOT / "job_configs" / "sweep.yaml", SAGEMAKER))
    handle = SageMakerBackend().submit(spec, build_package())

    described = aws.client("sagemaker", "us-east-1").describe_hyper_parameter_tuning_job(
        HyperParameterTuningJobName=handle.job_id
    )
    assert described["HyperParameterTuningJobConfig"]["Strategy"] == "Bayesian"
    assert described["TrainingJobDefinition"]["StaticHyperParameters"]["cloudtrain_module"] == json.dumps(
        "trainer.task"
    )
    TUNING_TRIALS[handle.job_id] = [
        {
            "TrainingJobName": f"{handle.job_id}-001-aaaa",
            "TrainingJobArn": "arn:x:1",
            "CreationTime": 0,
            "TrainingJobStatus": "Completed",
            "TunedHyperParameters": {"lr": "0.01", "optimizer": "adam"},
            "FinalHyperParameterTuningJobObjectiveMetric": {"MetricName": "val_accuracy", "Value": 0.91},
        },
        {
            "TrainingJobName": f"{handle.job_id}-002-bbbb",
            "TrainingJobArn": "arn:x:2",
            "CreationTime": 0,
            "TrainingJobStatus": "Completed",
            "TunedHyperParameters": {"lr": "0.001", "optimizer": "sgd"},
            "FinalHyperParameterTuningJobObjectiveMetric": {"MetricName": "val_accuracy", "Value": 0.95},
        },
        {
            "TrainingJobName": f"{handle.job_id}-003-cccc",
            "TrainingJobArn": "arn:x:3",
            "CreationTime": 0,
            "TrainingJobStatus": "Failed",
            "TunedHyperParameters": {"lr": "0.09", "optimizer": "sgd"},
            "FailureReason": "AlgorithmError",
        },
    ]
    assert isinstance(handle, SageMakerSweep)
    results = handle.results()
    assert [t.state for t in results.trials] == ["COMPLETE", "COMPLETE", "FAIL"]
    assert results.best is not None
    assert results.best.trial.endswith("-002-bbbb") and results.best.params == {"lr": "0.001", "optimizer": "sgd"}
    assert (results.metric, results.goal, results.max_trials) == ("val_accuracy", "maximize", 8)
    assert handle.status().state is JobState.SUCCEEDED  # moto completes tuning jobs at once
    assert handle.cancel().native_state == "Stopped"


def test_sagemaker_sweep_through_the_cli_is_remembered_and_results_print(
    aws: MotoAws, tmp_path, monkeypatch, capsys
) -> None:
    from cloudtrain.cli import main
    from tests.sweeps.test_sweep_requests import SAGEMAKER

    add_tuning_actions()
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    aws.client("s3", "us-east-1").create_bucket(Bucket="my-bucket")
    args = ["submit", "-c", str(ROOT / "job_configs" / "sweep.yaml"), "--detach"]
    for override in SAGEMAKER:
        args += ["--set", override]
    assert main(args) == 0
    out = capsys.readouterr().out
    job_id = out.split("Sweep ", 1)[1].split()[0]
    TUNING_TRIALS[job_id] = [
        {
            "TrainingJobName": f"{job_id}-001-aaaa",
            "TrainingJobArn": "arn:x:1",
            "CreationTime": 0,
            "TrainingJobStatus": "Completed",
            "TunedHyperParameters": {"lr": "0.01"},
            "FinalHyperParameterTuningJobObjectiveMetric": {"MetricName": "val_accuracy", "Value": 0.9},
        }
    ]
    assert main(["sweep", "results", job_id, "-o", "json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["best_trial"] == f"{job_id}-001-aaaa" and table["best_value"] == 0.9


def test_vertex_sweep_is_created_on_the_fake_and_its_trials_read_back(backend, jobs, gcs, tmp_path) -> None:
    from tests.backends.vertex.conftest import make_package

    spec = build_spec(load_config(ROOT / "job_configs" / "sweep.yaml"))
    spec = dataclasses.replace(spec, staging_bucket="gs://my-bucket")
    jobs.tuning_trials = [
        ({"lr": 0.01, "optimizer": "adam"}, 0.93),
        ({"lr": 0.05, "optimizer": "sgd"}, None),
        ({"lr": 0.001, "optimizer": "adam"}, 0.97),
    ]
    handle = backend.submit(spec, make_package(tmp_path))

    created = jobs.tuning_jobs[handle.job_id]
    assert created.display_name == spec.job_name and created.max_trial_count == 8
    assert created.trial_job_spec.worker_pool_specs[0].python_package_spec.python_module == "trainer.task"
    assert handle.status().state is JobState.RUNNING
    final = handle.wait()
    assert final.state is JobState.SUCCEEDED and final.details["trials"] == {"COMPLETE": 2, "FAIL": 1}
    results = handle.results()
    assert [t.state for t in results.trials] == ["COMPLETE", "FAIL", "COMPLETE"]
    assert results.best.trial == "3" and results.best.value == pytest.approx(0.97)
    assert results.best.params == {"lr": 0.001, "optimizer": "adam"}


@pytest.mark.parametrize("cancel", [True, False])
def test_a_ctrl_c_while_a_vertex_sweep_is_followed_cancels_it_only_with_cancel_on_interrupt(
    cancel, backend, jobs, gcs, tmp_path
) -> None:
    """``submit --cancel-on-interrupt`` of a cloud sweep: the tuning job is cancelled and followed to its
    CANCELLED end (130); without it the sweep keeps running (the CLI detaches)."""
    from cloudtrain.app.sweeps.drive import SweepInterrupted, follow_sweep
    from tests.backends.vertex.conftest import make_package

    spec = dataclasses.replace(
        build_spec(load_config(ROOT / "job_configs" / "sweep.yaml")), staging_bucket="gs://my-bucket"
    )
    handle = backend.submit(spec, make_package(tmp_path))
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 1:
            raise KeyboardInterrupt  # Ctrl-C at the first wait; the waits after the cancel pass

    handle.sleep = sleep
    if not cancel:
        with pytest.raises(SweepInterrupted):
            follow_sweep(handle, view=None, cancel=False)  # type: ignore[arg-type]
        assert "cancel_tuning" not in jobs.calls
        return
    end = follow_sweep(handle, view=None, cancel=True)  # type: ignore[arg-type]
    assert "cancel_tuning" in jobs.calls and end.status is not None and end.status.state is JobState.CANCELLED
    assert end.status.state.exit_code == 130
