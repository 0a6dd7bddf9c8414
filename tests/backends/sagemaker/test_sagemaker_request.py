"""JobSpec → CreateTrainingJob: golden files, botocore's own validation, and the edge cases."""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from cloudtrain.backends.sagemaker import BACKEND, request
from cloudtrain.backends.sagemaker.job_settings import SageMakerSettings
from cloudtrain.errors import UsageError
from cloudtrain.spec import DataChannel, ResumeSpec
from tests.backends.sagemaker.conftest import fake_package, make_spec

GOLDEN = Path(__file__).with_name("golden")


def _golden(name: str, params: dict[str, Any]) -> None:
    path = GOLDEN / name
    text = json.dumps(params, indent=2, sort_keys=False) + "\n"
    if os.environ.get("CLOUDTRAIN_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed; rerun with CLOUDTRAIN_UPDATE_GOLDEN=1 and review the diff"


@functools.cache
def _input_shape():
    import botocore.session

    return (
        botocore.session.get_session().get_service_model("sagemaker").operation_model("CreateTrainingJob").input_shape
    )


def _fullmatch(pattern: str, value: str) -> bool:
    """The model's patterns are Java regexes (``\\p{L}``): ``regex`` reads them, ``re`` only the rest."""
    try:
        import regex
    except ImportError:  # pragma: no cover - regex comes with the dev environment
        return "\\p{" in pattern or re.fullmatch(pattern, value) is not None
    return regex.fullmatch(pattern, value) is not None


def _strict(shape: Any, value: Any, path: str = "") -> list[str]:
    """What botocore's validator leaves out: max lengths, max counts and patterns of the model."""
    problems = []
    meta = shape.metadata
    if shape.type_name == "structure":
        for key, member in value.items():
            problems += _strict(shape.members[key], member, f"{path}.{key}")
    elif shape.type_name == "list":
        if "max" in meta and len(value) > meta["max"]:
            problems.append(f"{path}: {len(value)} items > {meta['max']}")
        for i, item in enumerate(value):
            problems += _strict(shape.member, item, f"{path}[{i}]")
    elif shape.type_name == "map":
        if "max" in meta and len(value) > meta["max"]:
            problems.append(f"{path}: {len(value)} entries > {meta['max']}")
        for key, item in value.items():
            problems += _strict(shape.key, key, f"{path} key {key!r}")
            problems += _strict(shape.value, item, f"{path}[{key!r}]")
    elif shape.type_name == "string":
        if "max" in meta and len(value) > meta["max"]:
            problems.append(f"{path}: {len(value)} chars > {meta['max']}")
        if "pattern" in meta and not _fullmatch(meta["pattern"], value):
            problems.append(f"{path}: {value!r} does not match {meta['pattern']}")
        if shape.enum and value not in shape.enum:
            problems.append(f"{path}: {value!r} not in {shape.enum}")
    elif shape.type_name in ("integer", "long") and "max" in meta and value > meta["max"]:
        problems.append(f"{path}: {value} > {meta['max']}")
    return problems


SPECS = {
    "gpu4": make_spec(),
    "spot-multiworker": make_spec(
        replica_count=3,
        spot=True,
        max_wait_seconds=172800,
        hyperparameters=MappingProxyType({"epochs": 10}),
        labels=MappingProxyType({}),
        env=MappingProxyType({}),
        args=(),
    ),
    "channels": make_spec(
        channels=MappingProxyType(
            {
                "train": DataChannel("train", "s3://datasets/digits/train"),
                "validation": DataChannel("validation", "s3://datasets/digits/val/", "FastFile", "ShardedByS3Key"),
                "extra": DataChannel(
                    "extra", "/home/me/extra", uri="s3://cloudtrain-staging/cloudtrain/data/" + "e" * 64 + "/"
                ),
            }
        ),
    ),
    # secrets: the references in Environment, never a value; the launcher reads them at each start.
    "secrets": make_spec(
        secrets=MappingProxyType({"DB_PASSWORD": "aws:arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf"})
    ),
    # a script job with secrets: the launcher is the sagemaker_program, the script in sagemaker_cloudtrain_script.
    "secrets-script": make_spec(
        secrets=MappingProxyType({"DB_PASSWORD": "aws:arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf"}),
        package=make_spec().package.__class__(
            path=Path("/src"), module="", requirements=(), name=None, version=None, script="train.py"
        ),
    ),
    # submit --resume: SageMaker copies the continued job's checkpoints to /opt/ml/checkpoints at start.
    "spot-resume": make_spec(spot=True, resume=ResumeSpec("old-job", "s3://cloudtrain-staging/old-job/checkpoints")),
}


@pytest.mark.parametrize("name", SPECS)
def test_request_matches_golden_file(name: str) -> None:
    _golden(f"create_training_job_{name}.json", BACKEND.render(SPECS[name], fake_package()))


@pytest.mark.parametrize("name", SPECS)
def test_request_passes_botocore_validation(name: str) -> None:
    from botocore.validate import validate_parameters

    params = BACKEND.render(SPECS[name], fake_package())
    validate_parameters(params, _input_shape())  # raises ParamValidationError
    assert _strict(_input_shape(), params) == []


def test_hyperparameters_are_json_as_the_container_decodes_them() -> None:
    hps = BACKEND.render(make_spec(), fake_package())["HyperParameters"]
    decoded = {k: json.loads(v) for k, v in hps.items()}
    assert decoded["batch_size_per_replica"] == 64 and decoded["learning_rate"] == 0.001
    assert decoded["mixed_precision"] is True
    assert decoded["cloudtrain_module"] == "trainer.task"
    assert decoded["cloudtrain_args"] == ["--epochs", "3"]
    assert decoded["sagemaker_program"] == "cloudtrain_launch.py"
    assert decoded["sagemaker_submit_directory"] == (
        "s3://cloudtrain-staging/cloudtrain/packages/" + "ab" * 32 + "/sourcedir.tar.gz"
    )
    assert decoded["sagemaker_region"] == "us-east-1"
    assert decoded["sagemaker_container_log_level"] == 20
    # as the SageMaker SDK sends it: the container exports it as SAGEMAKER_JOB_NAME (empty without it)
    assert decoded["sagemaker_job_name"] == make_spec().job_name
    assert "sagemaker_multi_worker_mirrored_strategy_enabled" not in decoded


def test_several_instances_turn_on_multi_worker_mirrored_strategy() -> None:
    params = BACKEND.render(make_spec(replica_count=2), fake_package())
    assert params["HyperParameters"]["sagemaker_multi_worker_mirrored_strategy_enabled"] == "true"
    assert params["ResourceConfig"]["InstanceCount"] == 2


def test_spot_sets_max_wait_and_checkpoints() -> None:
    params = BACKEND.render(make_spec(spot=True, max_wait_seconds=None, max_runtime_seconds=3600), fake_package())
    assert params["EnableManagedSpotTraining"] is True
    assert params["StoppingCondition"] == {"MaxRuntimeInSeconds": 3600, "MaxWaitTimeInSeconds": 3600}
    assert params["CheckpointConfig"] == {
        "S3Uri": "s3://cloudtrain-staging/cloudtrain/outputs/mnist-20250102-030405/mnist-20250102-030405/checkpoints"
    }
    assert "EnableManagedSpotTraining" not in BACKEND.render(make_spec(), fake_package())


def test_staging_bucket_with_a_prefix_keeps_it() -> None:
    uri = request.sourcedir_uri(make_spec(staging_bucket="s3://bucket/team/"), fake_package("cd" * 32))
    assert uri == "s3://bucket/team/cloudtrain/packages/" + "cd" * 32 + "/sourcedir.tar.gz"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"backend_settings": SageMakerSettings(role_arn=None)}, "execution role"),
        ({"staging_bucket": "gs://bucket"}, "s3:// URI"),
        ({"hyperparameters": MappingProxyType({"sagemaker_program": "x.py"})}, "'sagemaker_program' starts with"),
        ({"hyperparameters": MappingProxyType({"_x": 1})}, "'_x' starts with a prefix"),
        ({"args": ("x" * 2600,)}, "args: 2604 characters"),
        ({"hyperparameters": MappingProxyType({f"k{i}": i for i in range(95)})}, "SageMaker allows 100"),
    ],
)
def test_requests_the_service_would_refuse_are_refused_here(changes: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        BACKEND.render(make_spec(**changes), fake_package())


def test_render_imports_no_aws_sdk() -> None:
    code = (
        "import sys\n"
        "sys.path.insert(0, 'tests/backends/sagemaker')\n"
        "from conftest import make_spec, fake_package\n"
        "from cloudtrain.backends import get_backend\n"
        "get_backend('sagemaker').render(make_spec(), fake_package())\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore', 's3transfer'))\n"
        "print(loaded)\n"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_channels_become_s3_prefix_input_channels() -> None:
    channels = BACKEND.render(SPECS["channels"], fake_package())["InputDataConfig"]
    assert [c["ChannelName"] for c in channels] == ["train", "validation", "extra"]
    sources = [c["DataSource"]["S3DataSource"] for c in channels]
    assert [s["S3Uri"] for s in sources] == [
        "s3://datasets/digits/train",
        "s3://datasets/digits/val/",
        "s3://cloudtrain-staging/cloudtrain/data/" + "e" * 64 + "/",
    ]
    assert {s["S3DataType"] for s in sources} == {"S3Prefix"}
    assert [(c["InputMode"], s["S3DataDistributionType"]) for c, s in zip(channels, sources, strict=True)] == [
        ("File", "FullyReplicated"),
        ("FastFile", "ShardedByS3Key"),
        ("File", "FullyReplicated"),
    ]
    assert "InputDataConfig" not in BACKEND.render(make_spec(), fake_package())


def test_a_local_folder_channel_must_be_staged_before_render() -> None:
    spec = make_spec(channels=MappingProxyType({"train": DataChannel("train", "/home/me/data")}))
    with pytest.raises(UsageError, match="has not been staged"):
        BACKEND.render(spec, fake_package())


def test_the_request_hash_covers_every_field_and_not_itself() -> None:
    import dataclasses

    spec = make_spec()
    params = BACKEND.render(spec, fake_package())
    own = json.loads(params["HyperParameters"][request.REQUEST_HASH])
    assert own == request.request_hash(params)  # stable: recomputing over the sent request gives the same
    changed = [
        dataclasses.replace(spec, env=MappingProxyType({"OTHER": "1"})),
        dataclasses.replace(spec, labels=MappingProxyType({"team": "audio"})),
        dataclasses.replace(spec, max_runtime_seconds=60),
        dataclasses.replace(spec, output_dir="s3://elsewhere/out"),
        dataclasses.replace(spec, replica_count=2),
    ]
    hashes = {json.loads(BACKEND.render(s, fake_package())["HyperParameters"][request.REQUEST_HASH]) for s in changed}
    assert len(hashes) == len(changed) and own not in hashes


def test_attach_sweep_without_a_region_is_one_line():
    """A tuning job lives in a region: without one, a usage error names the flag before any client is made."""
    with pytest.raises(UsageError, match="--region"):
        BACKEND.attach_sweep("my-sweep", region=None)
