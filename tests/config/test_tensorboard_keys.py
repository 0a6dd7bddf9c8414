"""``tensorboard:`` and ``experiment:`` checked offline: one line each, naming the file, the key and the fix."""

from __future__ import annotations

import pytest

from cloudtrain.config.load import load_config
from cloudtrain.errors import ConfigError
from tests.conftest import SAGEMAKER_BASE, VERTEX_BASE

SA = "service_account: trainer@my-project.iam.gserviceaccount.com\n"


def _error(project, text: str) -> str:
    with pytest.raises(ConfigError) as refused:
        load_config(project(text))
    errors = getattr(refused.value, "errors", None) or [refused.value]
    assert len(errors) == 1, [str(e) for e in errors]
    return str(errors[0])


def test_a_vertex_instance_in_the_jobs_region_and_project_with_a_service_account_is_taken(project) -> None:
    board = "projects/my-project/locations/us-central1/tensorboards/42"
    assert load_config(project(VERTEX_BASE + f"tensorboard: {board}\n" + SA)).config.tensorboard == board
    number = "projects/123456789/locations/us-central1/tensorboards/42"  # a project number: not known offline
    assert load_config(project(VERTEX_BASE + f"tensorboard: {number}\n" + SA)).config.tensorboard == number


@pytest.mark.parametrize(
    ("value", "extra", "expected"),
    [
        (
            "projects/my-project/locations/europe-west4/tensorboards/42",
            SA,
            "tensorboard: the TensorBoard instance is in europe-west4, the job in us-central1",
        ),
        (
            "projects/other-team/locations/us-central1/tensorboards/42",
            SA,
            "tensorboard: the TensorBoard instance is in project other-team, the job in my-project",
        ),
        ("projects/my-project/locations/us-central1/tensorboards/42", "", "service_account: a job with a TensorBoard"),
        ("my-board", SA, "tensorboard: received 'my-board'; Vertex AI takes a TensorBoard instance's name"),
        ("true", SA, "tensorboard: received True; Vertex AI takes a TensorBoard instance's name"),
    ],
)
def test_a_vertex_instance_elsewhere_or_without_a_service_account_is_one_line(project, value, extra, expected) -> None:
    line = _error(project, VERTEX_BASE + f"tensorboard: {value}\n" + extra)
    assert line.split(" ")[0].split("/")[-1].startswith("job.yaml:") and expected in line, line


def test_sagemaker_takes_true_or_an_s3_path(project) -> None:
    assert load_config(project(SAGEMAKER_BASE + "tensorboard: true\n")).config.tensorboard is True
    assert load_config(project(SAGEMAKER_BASE + "tensorboard: s3://b/boards\n")).config.tensorboard == "s3://b/boards"
    line = _error(project, SAGEMAKER_BASE + "tensorboard: gs://b/boards\n")
    assert "tensorboard: received 'gs://b/boards'; SageMaker takes true" in line


def test_local_and_slurm_say_the_local_server_serves_them(project) -> None:
    local = VERTEX_BASE.replace("backend: vertex", "backend: local") + "tensorboard: true\n"
    line = _error(project, local)
    assert "tensorboard: this machine has no managed TensorBoard, and its runs need none: " in line
    assert "`cloudtrain tensorboard JOB` serves their event files here — remove tensorboard:" in line


@pytest.mark.parametrize("name", ["LR_sweep", "lr-sweep-", "a" * 64, "-x"])
def test_an_experiment_name_both_clouds_take(project, name) -> None:
    line = _error(project, VERTEX_BASE + f"experiment: '{name}'\n")
    assert f"experiment: received {name!r}; an experiment name is lowercase letters" in line
    assert load_config(project(VERTEX_BASE + "experiment: lr-sweep-2\n")).config.experiment == "lr-sweep-2"
