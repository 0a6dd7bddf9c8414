"""Vertex and ML Engine files moved to SageMaker with `--set backend=sagemaker`: the request botocore accepts."""

from __future__ import annotations

import json

import pytest

from cloudtrain.backends.sagemaker import BACKEND
from cloudtrain.config.load import load_config
from cloudtrain.spec import build_spec
from tests.backends.sagemaker.conftest import fake_package
from tests.backends.sagemaker.test_sagemaker_request import _golden, _input_shape, _strict
from tests.conftest import REPO

TO_SAGEMAKER = [
    "backend=sagemaker",
    "role_arn=arn:aws:iam::123456789012:role/SageMakerRole",
    "staging_bucket=s3://my-bucket",
]


@pytest.mark.parametrize("name", ["gpu4", "legacy-mlengine"])
def test_moved_config_renders_a_valid_create_training_job(name):
    import datetime as dt

    from botocore.validate import validate_parameters

    loaded = load_config(REPO / "job_configs" / f"{name}.yaml", TO_SAGEMAKER)
    spec = build_spec(loaded, now=dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone.utc), suffix="abc123")
    params = BACKEND.render(spec, fake_package())
    validate_parameters(params, _input_shape())
    assert _strict(_input_shape(), params) == []
    assert params["ResourceConfig"]["InstanceType"] == "ml.g4dn.12xlarge"
    assert ":2.18-gpu-" in params["AlgorithmSpecification"]["TrainingImage"] or name == "legacy-mlengine"
    assert json.loads(params["HyperParameters"]["cloudtrain_module"]) == "trainer.task"
    _golden(f"create_training_job_from_{name}.json", params)
