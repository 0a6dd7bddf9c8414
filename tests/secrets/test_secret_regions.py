"""An ``aws:`` secret that lives in another region than the job: it is read from the region its ARN
names, never from the job's or the shell's default region.

A user whose job runs in us-east-1 keeps the team's secrets in eu-west-3. Every other secrets test
kept secret and job in one region, so reading with the default region went unseen; here each region
also holds a DECOY secret of the same name and another value, so a read from the wrong region is a
wrong value (moto in server mode keeps each region's Secrets Manager apart, as AWS does).

Paths: the launcher on the training machine (``read_secrets``, ``python -m cloudtrain_secrets``), the
submit-time existence check, ``--local`` (read with the user's credentials), and SageMaker's
training toolkit running ``cloudtrain_launch.py`` in a job whose region is the default one."""

from __future__ import annotations

import hashlib
import json
import os
import textwrap
from pathlib import Path
from types import MappingProxyType

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.backends.secrets_here import check_exist
from cloudtrain.secrets.launcher import read_secrets
from tests.backends.local.conftest import make_spec as make_local_spec
from tests.backends.local.conftest import no_tf, shared_cache  # noqa: F401 — fixtures
from tests.backends.sagemaker.test_sagemaker_sourcedir import container_python  # noqa: F401 — a fixture
from tests.fakes.aws import MotoAws, env_for

#: (the secret's region, the job's = the default region)
REGIONS = [("eu-west-3", "us-east-1"), ("ap-southeast-2", "eu-west-1")]


def _secret_elsewhere(aws: MotoAws, secret_region: str, job_region: str, value: str) -> str:
    """The ARN of secret ``team/db`` in ``secret_region``; a decoy of that name in ``job_region``."""
    aws.client("secretsmanager", job_region).create_secret(Name="team/db", SecretString="decoy-of-the-job-region")
    return str(aws.client("secretsmanager", secret_region).create_secret(Name="team/db", SecretString=value)["ARN"])


def _default_region(monkeypatch: pytest.MonkeyPatch, region: str) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", region)
    monkeypatch.setenv("AWS_REGION", region)  # as SageMaker sets it in a job's container


@pytest.mark.parametrize(("secret_region", "job_region"), REGIONS)
def test_the_launcher_reads_the_secret_in_its_arns_region(aws, monkeypatch, secret_region, job_region) -> None:
    arn = _secret_elsewhere(aws, secret_region, job_region, f"pw-in-{secret_region}")
    assert f":{secret_region}:" in arn
    _default_region(monkeypatch, job_region)
    assert read_secrets({"DB_PASSWORD": f"aws:{arn}"}) == {"DB_PASSWORD": f"pw-in-{secret_region}"}


@pytest.mark.parametrize(("secret_region", "job_region"), REGIONS)
def test_the_submit_check_finds_the_secret_in_its_arns_region(aws, monkeypatch, secret_region, job_region) -> None:
    # no decoy here: the check asks DescribeSecret, and a secret only in the ARN's region is found there
    arn = aws.client("secretsmanager", secret_region).create_secret(Name="only-there", SecretString="x")["ARN"]
    _default_region(monkeypatch, job_region)
    warnings: list[str] = []
    check_exist({"DB_PASSWORD": f"aws:{arn}"}, os.environ, warn=warnings.append)  # raises UsageError if missing
    assert warnings == []


TASK = """
import hashlib, json, os
with open(os.environ["PROBE_FILE"], "w") as f:
    json.dump({"DB_PASSWORD": hashlib.sha256(os.environ["DB_PASSWORD"].encode()).hexdigest()}, f)
"""


@pytest.fixture(scope="module")
def probe_package(tmp_path_factory):
    from cloudtrain.packaging import build_sdist

    root = tmp_path_factory.mktemp("probe")
    (root / "regionprobe").mkdir()
    (root / "regionprobe" / "__init__.py").write_text("")
    (root / "regionprobe" / "task.py").write_text(textwrap.dedent(TASK))
    return build_sdist(root / "regionprobe", root / "dist", name="regionprobe", version="0.1")


def test_a_local_run_reads_the_secret_in_its_arns_region(
    aws,
    no_tf,  # noqa: F811
    probe_package,
    tmp_path,
    monkeypatch,
) -> None:
    secret_region, job_region = "eu-west-3", "us-east-1"
    arn = _secret_elsewhere(aws, secret_region, job_region, "pw-local-from-paris")
    _default_region(monkeypatch, job_region)
    spec = make_local_spec(tmp_path, cloud="sagemaker", module="regionprobe.task")
    assert spec.region == job_region
    spec = spec.__class__(**{**spec.__dict__, "secrets": MappingProxyType({"DB_PASSWORD": f"aws:{arn}"})})

    job = no_tf(environ={**os.environ, "PROBE_FILE": str(tmp_path / "probe.json")}).submit(spec, probe_package)
    lines = [line.message for line in job.logs(follow=True)]
    assert job.wait().state is JobState.SUCCEEDED, lines
    assert json.loads((tmp_path / "probe.json").read_text()) == {
        "DB_PASSWORD": hashlib.sha256(b"pw-local-from-paris").hexdigest()
    }


PROBE = """\
import json, os
print("probe " + json.dumps({"DB_PASSWORD": os.environ.get("DB_PASSWORD")}))
"""


@pytest.mark.slow
def test_the_sagemaker_toolkit_path_reads_the_secret_in_its_arns_region(
    aws,
    container_python,  # noqa: F811
    tmp_path: Path,
) -> None:
    from cloudtrain.backends.sagemaker import BACKEND
    from cloudtrain.backends.sagemaker.sourcedir import write_sourcedir
    from cloudtrain.packaging import build_script_sdist
    from cloudtrain.secrets.job import sdist_files
    from cloudtrain.spec import PackageSpec
    from tests.backends.sagemaker.conftest import make_spec
    from tests.backends.sagemaker.test_sagemaker_sourcedir import _run_in_container

    secret_region = "eu-west-3"
    src = tmp_path / "code"
    src.mkdir()
    (src / "train.py").write_text(PROBE)
    spec = make_spec(
        package=PackageSpec(path=src, module="", requirements=(), name=None, version=None, script="train.py"),
    )
    arn = _secret_elsewhere(aws, secret_region, spec.region, "pw-toolkit-from-paris")
    assert spec.region != secret_region
    secrets = {"DB_PASSWORD": f"aws:{arn}"}
    spec = spec.__class__(**{**spec.__dict__, "secrets": MappingProxyType(secrets)})
    package = build_script_sdist(src, tmp_path / "dist", "train.py", extra=sdist_files(secrets))
    params = BACKEND.render(spec, package)
    sourcedir = write_sourcedir(package, tmp_path / "sourcedir.tar.gz", script=True, secrets=True).path
    result = _run_in_container(
        container_python,
        sourcedir,
        params["HyperParameters"],
        tmp_path,
        {**env_for(aws.endpoint, spec.region), "AWS_REGION": spec.region, **params["Environment"]},
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    probes = [json.loads(line[len("probe ") :]) for line in out.splitlines() if line.startswith("probe ")]
    assert probes == [{"DB_PASSWORD": "pw-toolkit-from-paris"}], out
