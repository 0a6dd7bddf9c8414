"""A job with ``tensorboard:`` and ``experiment:``: its CreateTrainingJob equals, field for field, what the
pinned sagemaker-core SDK sends for the same job built with its own ``TensorBoardOutputConfig`` (whose
LocalPath default is where the trainer writes) and ``ExperimentConfig``. The SDK runs offline: its boto3
session stops the call at the edge (botocore's ``provide-client-params`` event) and keeps the parameters.

Imports sagemaker.core (seconds), hence slow."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cloudtrain.backends.sagemaker import BACKEND
from tests.backends.sagemaker.conftest import fake_package, make_spec
from tests.backends.sagemaker.test_sagemaker_request import _golden, _input_shape, _strict

pytestmark = pytest.mark.slow

CASES: dict[str, dict[str, Any]] = {
    "beside the outputs, us-east-1": dict(tensorboard=True, experiment="lr-sweep"),
    "own s3 path, eu-west-1": dict(
        region="eu-west-1", tensorboard="s3://team-boards/mnist/", experiment="baseline-2", labels={}
    ),
}


class _Sent(Exception):
    pass


def sdk_request(params: dict[str, Any], region: str) -> dict[str, Any]:
    import boto3
    from sagemaker.core import shapes
    from sagemaker.core.resources import TrainingJob
    from sagemaker.core.training.configs import TensorBoardOutputConfig
    from sagemaker.core.utils.code_injection.codec import transform

    args = transform(params, "CreateTrainingJobRequest")  # the rest of the job as the SDK's shapes
    args["tensor_board_output_config"] = TensorBoardOutputConfig(
        s3_output_path=params["TensorBoardOutputConfig"]["S3OutputPath"]
    )  # LocalPath: the SDK's default
    experiment = params["ExperimentConfig"]
    args["experiment_config"] = shapes.ExperimentConfig(
        experiment_name=experiment["ExperimentName"], run_name=experiment["RunName"]
    )
    sent: dict[str, Any] = {}

    def keep(params: dict[str, Any], **_: Any) -> None:
        sent.update(params)
        raise _Sent

    session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="y", region_name=region)
    session.events.register("provide-client-params.sagemaker.CreateTrainingJob", keep)
    with pytest.raises(_Sent):
        TrainingJob.create(**args, session=session, region=region)
    return sent


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_request_is_what_the_sagemaker_sdk_sends(case) -> None:
    spec = make_spec(**CASES[case])
    params = BACKEND.render(spec, fake_package())
    assert params["TensorBoardOutputConfig"]["LocalPath"] == "/opt/ml/output/tensorboard"
    assert params["ExperimentConfig"] == {"ExperimentName": spec.experiment, "RunName": spec.job_name}
    assert sdk_request(params, spec.region) == params
    assert _strict(_input_shape(), params) == []


def test_the_event_files_go_beside_the_jobs_outputs_or_to_the_path_given() -> None:
    beside = BACKEND.render(make_spec(tensorboard=True), fake_package())
    assert beside["TensorBoardOutputConfig"]["S3OutputPath"] == (
        f"{beside['OutputDataConfig']['S3OutputPath']}/{beside['TrainingJobName']}/tensorboard"
    )  # inside OUTPUT/JOB/: what `cloudtrain outputs` lists
    given = BACKEND.render(make_spec(tensorboard="s3://team-boards/mnist/"), fake_package())
    assert given["TensorBoardOutputConfig"]["S3OutputPath"] == "s3://team-boards/mnist"
    plain = BACKEND.render(make_spec(), fake_package())
    assert "TensorBoardOutputConfig" not in plain and "ExperimentConfig" not in plain


def test_golden_request_with_tensorboard_and_experiment() -> None:
    params = BACKEND.render(make_spec(tensorboard=True, experiment="lr-sweep"), fake_package())
    _golden("create_training_job_tensorboard.json", json.loads(json.dumps(params)))


def test_the_bundled_trainer_writes_its_event_files_where_sagemaker_uploads_them() -> None:
    from cloudtrain.backends.sagemaker.request import TENSORBOARD_LOCAL_PATH
    from trainer.env import resolve_dirs

    dirs = resolve_dirs({"SM_MODEL_DIR": "/opt/ml/model", "SM_TRAINING_ENV": "{}", "SM_CURRENT_HOST": "algo-1"})
    assert dirs.tensorboard_dir == TENSORBOARD_LOCAL_PATH
