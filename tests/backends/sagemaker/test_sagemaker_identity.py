"""Two submits in the same second are two SageMaker jobs; a different request under a taken name is an error."""

from __future__ import annotations

import dataclasses
import json
import logging
import textwrap
from types import MappingProxyType

import pytest

from cloudtrain import history
from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.cli import main
from cloudtrain.errors import UsageError
from tests.backends.sagemaker.conftest import make_spec
from tests.concurrency import at_once
from tests.fakes.aws import MotoAws

pytestmark = pytest.mark.server

REGION = "eu-west-1"
CONFIG = """\
name: same-second
backend: sagemaker
region: eu-west-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://cloudtrain-identity
machine: {type: ml.g4dn.12xlarge}
package: {path: trainer}
"""


@pytest.fixture
def config(tmp_path, aws: MotoAws):
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text("print('hi')\n")
    aws.client("s3", REGION).create_bucket(
        Bucket="cloudtrain-identity", CreateBucketConfiguration={"LocationConstraint": REGION}
    )
    path = tmp_path / "sm.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    return path


def test_same_second_submits_with_different_requests_are_two_jobs(config, aws: MotoAws, capsys):
    def submit(machine: str, env: str):
        return lambda: main(
            [
                "submit",
                "--config",
                str(config),
                "--detach",
                "--set",
                f"machine.type={machine}",
                "--set",
                f"env={{WHO: {env}}}",
            ]
        )

    assert at_once(submit("ml.g4dn.12xlarge", "first"), submit("ml.p3.2xlarge", "second")) == [0, 0]
    err = capsys.readouterr().err
    assert "attached" not in err

    sm = aws.client("sagemaker", REGION)
    names = [s["TrainingJobName"] for s in sm.list_training_jobs()["TrainingJobSummaries"]]
    assert len(names) == 2 and len(set(names)) == 2
    described = [sm.describe_training_job(TrainingJobName=n) for n in names]
    assert sorted(d["ResourceConfig"]["InstanceType"] for d in described) == ["ml.g4dn.12xlarge", "ml.p3.2xlarge"]
    outputs = {d["OutputDataConfig"]["S3OutputPath"] for d in described}
    assert len(outputs) == 2 and all(
        o.endswith(d["TrainingJobName"])
        for o, d in zip(
            sorted(outputs), sorted(described, key=lambda d: d["OutputDataConfig"]["S3OutputPath"]), strict=True
        )
    )
    assert sorted(r.job_id for r in history.recent(100)) == sorted(names)


def test_a_different_request_under_a_taken_name_is_an_error_not_an_attach(aws: MotoAws, build_package):
    aws.client("s3", "us-east-1").create_bucket(Bucket="cloudtrain-staging")
    package = build_package()
    backend = SageMakerBackend()
    first = make_spec(job_name="taken-name")
    backend.submit(first, package)

    other = dataclasses.replace(first, machine=dataclasses.replace(first.machine, type="ml.p3.2xlarge"))
    with pytest.raises(
        UsageError,
        match=r"a different training job named taken-name already exists in us-east-1 "
        r"\(instance type differ\); not attaching",
    ):
        backend.submit(other, package)

    env_only = dataclasses.replace(first, env=MappingProxyType({"TF_CPP_MIN_LOG_LEVEL": "3"}))
    with pytest.raises(UsageError, match=r"\(environment or tags differ\)"):
        backend.submit(env_only, package)  # moto does not even return the environment: the request hash tells

    desc = aws.client("sagemaker", "us-east-1").describe_training_job(TrainingJobName="taken-name")
    assert desc["ResourceConfig"]["InstanceType"] == "ml.g4dn.12xlarge"  # the first job, untouched


def test_the_very_same_request_again_attaches(aws: MotoAws, build_package, caplog):
    """A retried create whose first attempt went through (its answer lost) finds its own job."""
    aws.client("s3", "us-east-1").create_bucket(Bucket="cloudtrain-staging")
    package = build_package()
    backend = SageMakerBackend()
    spec = make_spec(job_name="retried")
    backend.submit(spec, package)
    with caplog.at_level(logging.INFO, logger="cloudtrain"):
        job = backend.submit(spec, package)
    assert job.job_id == "retried"
    assert "training job retried already exists with this request; attached to it" in caplog.text
    sm = aws.client("sagemaker", "us-east-1")
    assert [s["TrainingJobName"] for s in sm.list_training_jobs()["TrainingJobSummaries"]] == ["retried"]
    sent = backend.render(spec, package)["HyperParameters"]["sagemaker_cloudtrain_request"]
    assert len(json.loads(sent)) == 64
