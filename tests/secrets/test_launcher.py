"""The secrets launcher as it runs on the training machine: Secret Manager over REST with the
metadata server's token (the fake in tests/fakes/secret_manager.py), Secrets Manager with boto3
(moto in server mode), and ``python -m cloudtrain_secrets`` running the user's module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cloudtrain.secrets import job, launcher
from cloudtrain.secrets.launcher import SecretError, read_secrets

HF = "projects/my-project/secrets/hf-token"
PROBE = """\
import hashlib, json, os, sys
print(json.dumps({"args": sys.argv[1:], "HF_TOKEN": os.environ.get("HF_TOKEN"),
                  "DB_PASSWORD": os.environ.get("DB_PASSWORD"),
                  "launcher_vars": sorted(k for k in os.environ
                                          if k.startswith(("CLOUDTRAIN_SECRET_", "CLOUDTRAIN_RUN")))}))
"""


def test_gcp_reference_is_read_with_the_metadata_token_and_latest_at_each_start(secret_manager):
    secret_manager.add(HF, "hf_first")
    refs = {"HF_TOKEN": f"gcp:{HF}/versions/latest"}
    assert read_secrets(refs) == {"HF_TOKEN": "hf_first"}
    secret_manager.add(HF, "hf_rotated")  # a rotation: the next start reads the new version
    assert read_secrets(refs) == {"HF_TOKEN": "hf_rotated"}
    accesses = [(path, token) for path, token in secret_manager.requests if path.endswith(":access")]
    assert accesses == [(f"/v1/{HF}/versions/latest:access", "ya29.fake-metadata-token")] * 2
    assert read_secrets({"HF_TOKEN": f"gcp:{HF}/versions/1"}) == {"HF_TOKEN": "hf_first"}


def test_gcp_permission_denied_and_missing_secret_are_one_line_each(secret_manager):
    secret_manager.add(HF, "hf_x")
    secret_manager.denied.add(HF)
    with pytest.raises(SecretError) as denied:
        read_secrets({"HF_TOKEN": f"gcp:{HF}/versions/latest"})
    assert str(denied.value) == (
        f"gcp:{HF}/versions/latest: 403 PERMISSION_DENIED: Permission "
        f"'secretmanager.versions.access' denied for resource '{HF}/versions/latest' "
        "(or it may not exist)."
    )
    with pytest.raises(SecretError, match=r"^gcp:projects/p/secrets/nope/versions/2: 404 NOT_FOUND: Secret "):
        read_secrets({"X": "gcp:projects/p/secrets/nope/versions/2"})


def test_metadata_server_unreachable_is_one_line(monkeypatch):
    from tests.fakes.gcs import free_port

    monkeypatch.setenv("GCE_METADATA_HOST", f"127.0.0.1:{free_port()}")
    with pytest.raises(SecretError, match=r"^cannot get a token from the metadata server at 127\.0\.0\.1:\d+: "):
        read_secrets({"X": "gcp:projects/p/secrets/s/versions/latest"})


def test_aws_reference_reads_awscurrent_at_each_start(aws):
    client = aws.client("secretsmanager", "us-east-1")
    arn = client.create_secret(Name="db", SecretString="pw-one")["ARN"]
    assert read_secrets({"DB_PASSWORD": f"aws:{arn}"}) == {"DB_PASSWORD": "pw-one"}
    client.put_secret_value(SecretId=arn, SecretString="pw-two")  # rotation
    assert read_secrets({"DB_PASSWORD": f"aws:{arn}"}) == {"DB_PASSWORD": "pw-two"}


def test_aws_missing_secret_is_one_line(aws):
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gone-AbCdEf"
    with pytest.raises(SecretError, match=rf"^aws:{arn}: ResourceNotFoundException: "):
        read_secrets({"X": f"aws:{arn}"})


def _vertex_machine(tmp_path: Path) -> Path:
    """What Vertex AI's pip install of a secrets job's sdist leaves: cloudtrain_secrets and the user's module."""
    site = tmp_path / "site"
    (site / "cloudtrain_secrets").mkdir(parents=True)
    (site / "cloudtrain_secrets" / "__init__.py").write_text("")
    (site / "cloudtrain_secrets" / "__main__.py").write_text(Path(launcher.__file__).read_text())
    (site / "probe.py").write_text(PROBE)
    return site


def _run(site: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = dict(os.environ)  # the fakes' endpoints, as the test set them
    return subprocess.run(
        [sys.executable, "-m", "cloudtrain_secrets", "--epochs=2", "x y"],
        cwd=site,
        env={**base, "PYTHONPATH": str(site), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_launcher_runs_the_module_with_the_secrets_in_its_environment_only(tmp_path, secret_manager, aws):
    secret_manager.add(HF, "hf_abc123")
    arn = aws.client("secretsmanager", "us-east-1").create_secret(Name="db", SecretString="pw")["ARN"]
    refs = {"HF_TOKEN": f"gcp:{HF}/versions/latest", "DB_PASSWORD": f"aws:{arn}"}
    done = _run(
        _vertex_machine(tmp_path),
        {**{f"CLOUDTRAIN_SECRET_{k}": v for k, v in refs.items()}, "CLOUDTRAIN_RUN_MODULE": "probe"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "args": ["--epochs=2", "x y"],
        "HF_TOKEN": "hf_abc123",
        "DB_PASSWORD": "pw",
        "launcher_vars": [],
    }
    assert "hf_abc123" not in done.stdout.replace('"HF_TOKEN": "hf_abc123"', "") + done.stderr


def test_launcher_permission_failure_is_one_log_line_and_exit_1(tmp_path, secret_manager):
    secret_manager.add(HF, "hf_abc123")
    secret_manager.denied.add(HF)
    refs = {"HF_TOKEN": f"gcp:{HF}/versions/latest"}
    done = _run(
        _vertex_machine(tmp_path),
        {**{f"CLOUDTRAIN_SECRET_{k}": v for k, v in refs.items()}, "CLOUDTRAIN_RUN_MODULE": "probe"},
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"cloudtrain: cannot read secret gcp:{HF}/versions/latest: 403 "
        f"PERMISSION_DENIED: Permission 'secretmanager.versions.access' denied for "
        f"resource '{HF}/versions/latest' (or it may not exist)."
    ]


def test_the_job_side_names_the_launcher_file_and_its_variables_as_the_launcher_does():
    """``secrets/job.py`` reads the launcher as a file (importing it would load its HTTP client on every
    submit): the file it ships is this module's, and the variables it sets are the ones this module reads."""
    assert job.LAUNCHER_SOURCE.resolve() == Path(launcher.__file__).resolve()
    assert (job.SECRET_PREFIX, job.RUN_MODULE_ENV) == (launcher.SECRET_PREFIX, launcher.RUN_MODULE_ENV)
