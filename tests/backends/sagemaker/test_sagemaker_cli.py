"""`cloudtrain submit / status / logs / list` for SageMaker, through the CLI, against moto."""

from __future__ import annotations

import json
import textwrap

import pytest

from cloudtrain.cli import main
from tests.fakes.aws import LogWriter, MotoAws

pytestmark = pytest.mark.server

CONFIG = """\
name: mnist-sm
backend: sagemaker
region: eu-west-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://cloudtrain-cli
machine: {type: ml.g4dn.12xlarge}
package: {path: trainer}
hyperparameters: {epochs: 2}
"""


@pytest.fixture
def config(tmp_path, aws: MotoAws):
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text("print('hi')\n")
    aws.client("s3", "eu-west-1").create_bucket(
        Bucket="cloudtrain-cli", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
    )
    path = tmp_path / "sm.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    return path


def submit_detached(config, capsys) -> str:
    assert main(["submit", "--config", str(config), "--detach"]) == 0
    out = capsys.readouterr().out
    job = out.split("Job ", 1)[1].split()[0]
    assert f"cloudtrain logs {job} --follow" in out and f"cloudtrain cancel {job}" in out
    return job


def test_submit_streams_and_exits_zero_on_completed(config, aws, capsys):
    code = main(["submit", "--config", str(config)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "ml.g4dn.12xlarge" in captured.out and "4 × T4" in captured.out  # the summary
    assert "Completed" in captured.out or "SUCCEEDED" in captured.out
    assert "uploaded s3://cloudtrain-cli/cloudtrain/packages/" in captured.err


def test_failed_job_prints_its_reason_and_exits_nonzero(config, aws, capsys):
    job = submit_detached(config, capsys)
    writer = LogWriter(aws.client("logs", "eu-west-1"), job)
    writer.write(writer.open(1), ["step 1", "Traceback: CUDA out of memory"])
    aws.set_job("eu-west-1", job, "Failed", failure_reason="AlgorithmError: CUDA out of memory")
    code = main(["logs", job, "--follow"])  # found through this machine's job history
    captured = capsys.readouterr()
    assert code == 1
    assert "algo-1" in captured.out and "Traceback: CUDA out of memory" in captured.out
    assert captured.err.strip().splitlines()[-1] == (
        f"error: job {job} ended FAILED: AlgorithmError: CUDA out of memory"
    )


def test_status_and_list_as_json(config, aws, capsys):
    job = submit_detached(config, capsys)
    assert main(["status", job, "-o", "json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["job_id"], status["state"]) == (job, "SUCCEEDED")
    assert main(["list", "--backend", "sagemaker", "--region", "eu-west-1", "-o", "json"]) == 0
    assert [j["job_id"] for j in json.loads(capsys.readouterr().out)] == [job]


def test_second_submit_skips_the_unchanged_upload(config, aws, capsys):
    submit_detached(config, capsys)
    code = main(["submit", "--config", str(config), "--detach"])
    assert code == 0 and "skipped" in capsys.readouterr().err


def test_submit_warns_once_about_a_hyperparameter_the_container_shell_drops(config, aws, capsys):
    config.write_text(config.read_text().replace("{epochs: 2}", "{epochs: 2, learning-rate: 0.1}"))
    assert main(["submit", "--config", str(config), "--detach"]) == 0
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if "SM_HP_" in line] == [
        "warning: hyperparameters: 'learning-rate': SageMaker's TensorFlow containers drop SM_HP_LEARNING-RATE "
        "(their /bin/sh passes no variable whose name has '-'); rename it 'learning_rate', or read SM_HPS or the "
        "--learning-rate argument"
    ]
