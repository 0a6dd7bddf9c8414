"""``goal: minimize`` end to end on both clouds' servers: the tuning job the server holds minimizes
(Vertex's ``StudySpec.metrics[0].goal``, SageMaker's ``HyperParameterTuningJobObjective.Type``), and
the results read back from it say ``minimize`` and name the trial with the LOWEST value as the best.

A sweep rendered or read back as maximize trains as many trials and then reports the worst one as
best; every earlier cloud-sweep test maximized, so such a one-line flip went unseen."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.backends.sagemaker.tuning_jobs import SageMakerSweep
from cloudtrain.config.load import load_config
from cloudtrain.spec import build_spec
from tests.fakes.aws import TUNING_TRIALS, MotoAws, add_tuning_actions

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[2]
MINIMIZE = ["sweep.goal=minimize", "sweep.metric=val_loss"]


def _sagemaker_trial(job_id: str, n: int, lr: str, loss: float) -> dict:
    return {
        "TrainingJobName": f"{job_id}-00{n}-trial",
        "TrainingJobArn": f"arn:x:{n}",
        "CreationTime": 0,
        "TrainingJobStatus": "Completed",
        "TunedHyperParameters": {"lr": lr},
        "FinalHyperParameterTuningJobObjectiveMetric": {"MetricName": "val_loss", "Value": loss},
    }


@pytest.mark.parametrize(
    ("region", "losses", "best"),
    [("us-east-1", (0.42, 0.17, 0.65), 2), ("eu-west-1", (0.08, 0.31, 0.12), 1)],
)
def test_sagemaker_minimize_sweep_is_created_minimizing_and_its_lowest_trial_is_best(
    aws: MotoAws, build_package, region: str, losses: tuple[float, ...], best: int
) -> None:
    from tests.sweeps.test_sweep_requests import SAGEMAKER

    add_tuning_actions()
    aws.client("s3", region).create_bucket(
        Bucket="my-bucket",
        **({} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}),
    )
    overrides = [o for o in SAGEMAKER if not o.startswith("region=")] + [f"region={region}", *MINIMIZE]
    spec = build_spec(load_config(ROOT / "job_configs" / "sweep.yaml", overrides))
    handle = SageMakerBackend().submit(spec, build_package())

    described = aws.client("sagemaker", region).describe_hyper_parameter_tuning_job(
        HyperParameterTuningJobName=handle.job_id
    )
    assert described["HyperParameterTuningJobConfig"]["HyperParameterTuningJobObjective"] == {
        "Type": "Minimize",
        "MetricName": "val_loss",
    }
    TUNING_TRIALS[handle.job_id] = [
        _sagemaker_trial(handle.job_id, n, lr, loss)
        for n, (lr, loss) in enumerate(zip(("0.01", "0.001", "0.05"), losses, strict=True), start=1)
    ]
    assert isinstance(handle, SageMakerSweep)
    results = handle.results()
    assert (results.metric, results.goal) == ("val_loss", "minimize")
    assert results.best is not None
    assert results.best.trial == f"{handle.job_id}-00{best}-trial" and results.best.value == min(losses)


@pytest.mark.parametrize(("losses", "best"), [((0.42, 0.17, 0.65), "2"), ((0.08, 0.31, 0.12), "1")])
def test_vertex_minimize_sweep_is_created_minimizing_and_its_lowest_trial_is_best(
    backend, jobs, gcs, tmp_path, losses: tuple[float, ...], best: str
) -> None:
    from google.cloud.aiplatform_v1.types import study

    from tests.backends.vertex.conftest import make_package

    spec = build_spec(load_config(ROOT / "job_configs" / "sweep.yaml", MINIMIZE))
    spec = dataclasses.replace(spec, staging_bucket="gs://my-bucket")
    jobs.tuning_trials = [
        ({"lr": lr, "optimizer": "adam"}, loss) for lr, loss in zip((0.01, 0.001, 0.05), losses, strict=True)
    ]
    handle = backend.submit(spec, make_package(tmp_path))

    created = jobs.tuning_jobs[handle.job_id]
    assert [(m.metric_id, m.goal) for m in created.study_spec.metrics] == [
        ("val_loss", study.StudySpec.MetricSpec.GoalType.MINIMIZE)
    ]
    handle.wait()
    results = handle.results()
    assert (results.metric, results.goal) == ("val_loss", "minimize")
    assert results.best is not None
    assert results.best.trial == best and results.best.value == pytest.approx(min(losses))


@pytest.mark.parametrize(
    ("legacy_goal", "goal"), [("MINIMIZE", "MINIMIZE"), ("minimize", "MINIMIZE"), ("MAXIMIZE", "MAXIMIZE")]
)
def test_ml_engines_goal_is_the_studys_goal(tmp_path: Path, legacy_goal: str, goal: str) -> None:
    # ML Engine's hyperparameters block (config_hptuning.yaml) through to the Vertex request
    from cloudtrain.backends.vertex import VertexBackend
    from tests.backends.vertex.conftest import make_package
    from tests.sweeps.test_sweep_config import LEGACY

    path = tmp_path / "config_hptuning.yaml"
    path.write_text(
        f"project: p\nstaging_bucket: gs://b\npackage: {{path: {ROOT / 'trainer'}}}\n"
        + LEGACY.replace("goal: MAXIMIZE", f"goal: {legacy_goal}").replace("val_accuracy", "val_loss")
    )
    body = VertexBackend().render(build_spec(load_config(path)), make_package(tmp_path))
    assert body["studySpec"]["metrics"] == [{"metricId": "val_loss", "goal": goal}]
