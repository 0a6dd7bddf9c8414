"""Every name a cloud limits is derived within the limit from the longest name a config accepts
(issue 27: a 128-character name made a 151-character Vertex displayName), checked by the clouds'
own rules: Vertex displayName 128, label values 63; SageMaker TrainingJobName 63, tuning job 32."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.backends.vertex import VertexBackend
from cloudtrain.config.load import load_config
from cloudtrain.spec import build_spec
from tests.backends.vertex.conftest import make_package

ROOT = Path(__file__).resolve().parents[1]
LONGEST = "A" + "b_-" * 42 + "c"  # 128 characters: the schema's limit, with the characters a cut can end on
SAGEMAKER = [
    "backend=sagemaker",
    "region=us-east-1",
    "staging_bucket=s3://my-bucket",
    "machine.type=ml.g4dn.xlarge",
    "machine.accelerator=null",
    "machine.accelerator_count=0",
    "project=null",
    "role_arn=arn:aws:iam::123456789012:role/SageMakerRole",
]
SAGEMAKER_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")  # botocore's TrainingJobName pattern
VERTEX_LABEL_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")


def _render(config: str, *overrides: str, tmp_path: Path) -> dict:
    spec = build_spec(load_config(ROOT / "job_configs" / config, [f"name={LONGEST}", *overrides]))
    backend = VertexBackend() if spec.backend == "vertex" else SageMakerBackend()
    return backend.render(spec, make_package(tmp_path))


def test_the_longest_name_is_accepted():
    assert len(LONGEST) == 128
    assert load_config(ROOT / "job_configs" / "gpu4.yaml", [f"name={LONGEST}"]).config.name == LONGEST


@pytest.mark.parametrize("config", ["gpu4.yaml", "sweep.yaml"])
@pytest.mark.parametrize("suffix", ["name_suffix=true", "name_suffix=false"])
def test_vertex_display_name_and_labels_fit(config, suffix, tmp_path):
    body = _render(config, suffix, "labels={team: " + "v" * 63 + "}", tmp_path=tmp_path)
    assert 0 < len(body["displayName"]) <= 128
    assert body["displayName"].startswith(LONGEST[:100])  # cut, not replaced: people still find their job
    assert body["labels"] and all(VERTEX_LABEL_VALUE.match(v) for v in body["labels"].values())


def test_sagemaker_training_job_name_fits(tmp_path):
    params = _render("gpu4.yaml", *SAGEMAKER, tmp_path=tmp_path)
    name = params["TrainingJobName"]
    assert len(name) <= 63 and SAGEMAKER_NAME.match(name), name
    assert name.startswith(LONGEST.replace("_", "-")[:30])


def test_sagemaker_tuning_job_name_fits(tmp_path):
    params = _render("sweep.yaml", *SAGEMAKER, tmp_path=tmp_path)
    name = params["HyperParameterTuningJobName"]
    assert len(name) <= 32 and SAGEMAKER_NAME.match(name), name
