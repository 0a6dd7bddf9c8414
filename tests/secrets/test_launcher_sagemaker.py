"""A job with secrets under SageMaker's contract: the training toolkit (sagemaker-training, as the TF
image runs it) unpacks the source dir and runs ``cloudtrain_launch.py``, which reads the
Secrets Manager reference (moto in server mode) and starts the user's module or script with
the value in its environment, the reference gone."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

import pytest

from cloudtrain.backends.sagemaker import BACKEND, request
from cloudtrain.backends.sagemaker.sourcedir import write_sourcedir
from cloudtrain.config.script_mode import script_cmd_args
from cloudtrain.packaging import build_script_sdist
from cloudtrain.secrets.job import reference_env, sdist_files
from cloudtrain.spec import PackageSpec
from tests.backends.sagemaker.conftest import make_spec
from tests.backends.sagemaker.test_sagemaker_sourcedir import _run_in_container, container_python  # noqa: F401
from tests.fakes.aws import env_for

PROBE = """\
import json, os, sys
print("probe " + json.dumps({"argv": sys.argv[1:], "DB_PASSWORD": os.environ.get("DB_PASSWORD"),
                             "refs": sorted(k for k in os.environ if k.startswith("CLOUDTRAIN_SECRET_"))}))
"""


def _probe(out: str) -> dict:
    return json.loads(next(line for line in out.splitlines() if line.startswith("probe "))[len("probe ") :])


def _secret(aws) -> tuple[str, dict[str, str]]:
    arn = aws.client("secretsmanager", "us-east-1").create_secret(Name="db", SecretString="s3cr3t-pw")["ARN"]
    secrets = {"DB_PASSWORD": f"aws:{arn}"}
    return arn, secrets


@pytest.mark.slow
def test_a_package_job_gets_the_secret_in_its_environment(aws, container_python, tmp_path: Path) -> None:  # noqa: F811
    from cloudtrain.packaging import build_sdist

    _, secrets = _secret(aws)
    src = tmp_path / "src" / "probe_trainer"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "task.py").write_text(PROBE)
    package = build_sdist(src, tmp_path / "dist", version="0.1", extra=sdist_files(secrets))
    spec = make_spec(
        package=PackageSpec(path=src, module="probe_trainer.task", requirements=(), name=None, version="0.1"),
        secrets=MappingProxyType(secrets),
    )
    params = BACKEND.render(spec, package)
    sourcedir = write_sourcedir(package, tmp_path / "sourcedir.tar.gz").path
    result = _run_in_container(
        container_python,
        sourcedir,
        params["HyperParameters"],
        tmp_path,
        {**env_for(aws.endpoint), **params["Environment"]},
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert _probe(out) == {"argv": list(spec.module_args()), "DB_PASSWORD": "s3cr3t-pw", "refs": []}
    assert out.count("s3cr3t-pw") == 1, out  # only the probe's own line: no log line of ours holds it


@pytest.mark.slow
def test_a_script_job_gets_the_secret_and_its_arguments(aws, container_python, tmp_path: Path) -> None:  # noqa: F811
    _, secrets = _secret(aws)
    src = tmp_path / "code"
    src.mkdir()
    (src / "train.py").write_text(PROBE)
    package = build_script_sdist(src, tmp_path / "dist", "train.py", extra=sdist_files(secrets))
    spec = make_spec(
        package=PackageSpec(path=src, module="", requirements=(), name=None, version=None, script="train.py"),
        secrets=MappingProxyType(secrets),
    )
    params = BACKEND.render(spec, package)
    sourcedir = write_sourcedir(package, tmp_path / "sourcedir.tar.gz", script=True, secrets=True).path
    result = _run_in_container(
        container_python,
        sourcedir,
        params["HyperParameters"],
        tmp_path,
        {**env_for(aws.endpoint), **params["Environment"]},
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    probe = _probe(out)
    assert probe["DB_PASSWORD"] == "s3cr3t-pw" and probe["refs"] == []
    # what the toolkit passes a script without secrets: the hyperparameters as --name value, model_dir included
    assert probe["argv"] == script_cmd_args(spec.script_hyperparameters(request.model_dir_uri(spec)))


@pytest.mark.slow
def test_a_secret_the_role_cannot_read_is_one_line_and_exit_1(aws, container_python, tmp_path: Path) -> None:  # noqa: F811
    src = tmp_path / "code"
    src.mkdir()
    (src / "train.py").write_text(PROBE)
    secrets = {"DB_PASSWORD": "aws:arn:aws:secretsmanager:us-east-1:123456789012:secret:gone-AbCdEf"}
    package = build_script_sdist(src, tmp_path / "dist", "train.py", extra=sdist_files(secrets))
    spec = make_spec(
        package=PackageSpec(path=src, module="", requirements=(), name=None, version=None, script="train.py"),
        secrets=MappingProxyType(secrets),
    )
    params = BACKEND.render(spec, package)
    sourcedir = write_sourcedir(package, tmp_path / "sourcedir.tar.gz", script=True, secrets=True).path
    result = _run_in_container(
        container_python,
        sourcedir,
        params["HyperParameters"],
        tmp_path,
        {**env_for(aws.endpoint), **reference_env(secrets)},
    )
    out = result.stdout + result.stderr
    lines = [line for line in out.splitlines() if line.startswith("cloudtrain: cannot read secret")]
    assert lines == [
        f"cloudtrain: cannot read secret {secrets['DB_PASSWORD']}: ResourceNotFoundException: "
        "Secrets Manager can't find the specified secret."
    ], out
    assert "USER SCRIPT FAILED 1" in out and result.returncode == 1
    assert "probe " not in out
