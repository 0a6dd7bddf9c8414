"""A ``--local`` run with ``secrets:``: every kind read on this machine with the user's credentials
(a shell variable, Secret Manager through the fake with a user's ADC file, Secrets Manager on
moto), the values in the replicas' environment only, and nowhere cloudtrain writes or shows."""

from __future__ import annotations

import os
import stat
import textwrap
from types import MappingProxyType

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.errors import UsageError
from tests.fakes.secret_manager import USER_TOKEN

from .conftest import make_spec

TASK = """
import hashlib, json, os, sys
names = ["HF_TOKEN", "DB_PASSWORD", "GCP_TOKEN", "WANDB_API_KEY"]
print("got " + " ".join(os.environ.get(n, "-") for n in names))
with open(os.environ["PROBE_FILE"], "w") as f:
    json.dump({n: hashlib.sha256(os.environ[n].encode()).hexdigest() for n in names}, f)
"""
VALUES = {
    "HF_TOKEN": "hf_from_my_shell_0001",
    "DB_PASSWORD": "db-pw-from-aws-0002",
    "GCP_TOKEN": "gcp-value-0003",
    "WANDB_API_KEY": "wandb-in-env-0004",
}


@pytest.fixture(scope="module")
def probe_package(tmp_path_factory):
    from cloudtrain.packaging import build_sdist

    root = tmp_path_factory.mktemp("probe")
    (root / "probepkg").mkdir()
    (root / "probepkg" / "__init__.py").write_text("")
    (root / "probepkg" / "task.py").write_text(textwrap.dedent(TASK))
    return build_sdist(root / "probepkg", root / "dist", name="probepkg", version="0.1")


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("cloud", ["vertex", "sagemaker"])
def test_local_run_reads_every_kind_and_never_writes_or_shows_a_value(
    cloud, no_tf, probe_package, tmp_path, aws, secret_manager, monkeypatch
):
    import json

    arn = aws.client("secretsmanager", "us-east-1").create_secret(Name="db", SecretString=VALUES["DB_PASSWORD"])["ARN"]
    secret_manager.add("projects/my-project/secrets/gt", VALUES["GCP_TOKEN"])
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", secret_manager.user_credentials(tmp_path / "adc.json"))
    environ = {**os.environ, "MY_HF": VALUES["HF_TOKEN"], "PROBE_FILE": str(tmp_path / "probe.json")}
    spec = make_spec(tmp_path, cloud=cloud, module="probepkg.task", env={"WANDB_API_KEY": VALUES["WANDB_API_KEY"]})
    spec = spec.__class__(
        **{
            **spec.__dict__,
            "secrets": MappingProxyType(
                {
                    "HF_TOKEN": "shell:MY_HF",
                    "DB_PASSWORD": f"aws:{arn}",
                    "GCP_TOKEN": "gcp:projects/my-project/secrets/gt/versions/latest",
                }
            ),
        }
    )

    job = no_tf(environ=environ).submit(spec, probe_package)
    lines = [line.message for line in job.logs(follow=True)]
    assert job.wait().state is JobState.SUCCEEDED, lines

    # the process got every value (as hashes: the probe never writes a value)
    assert json.loads((tmp_path / "probe.json").read_text()) == {n: _sha(v) for n, v in VALUES.items()}
    assert "got *** *** *** ***" in lines  # its own print of them is masked
    # the gcp: reference was read with the user's credentials, not a metadata token
    assert ("/v1/projects/my-project/secrets/gt/versions/latest:access", USER_TOKEN) in secret_manager.requests
    run_dir = tmp_path / "out" / "local-run"
    replicas = run_dir / "replicas.json"
    assert stat.S_IMODE(replicas.stat().st_mode) == 0o600
    for path in run_dir.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert not [n for n, v in VALUES.items() if v in text], path
    assert not [n for n, v in VALUES.items() for line in lines if v in line]
    assert not [v for v in VALUES.values() for p in job.plans for a in (p.env.values()) if v in a]


def test_an_unset_shell_variable_is_one_line(no_tf, probe_package, tmp_path):
    spec = make_spec(tmp_path, module="probepkg.task")
    spec = spec.__class__(**{**spec.__dict__, "secrets": MappingProxyType({"HF_TOKEN": "shell:NOT_SET_HERE"})})
    with pytest.raises(UsageError) as info:
        no_tf(environ={"PATH": os.environ["PATH"]}).submit(spec, probe_package)
    assert str(info.value) == (
        "secrets: HF_TOKEN: shell:NOT_SET_HERE: $NOT_SET_HERE is not set in this shell — "
        "export NOT_SET_HERE=… before cloudtrain submit --local"
    )
