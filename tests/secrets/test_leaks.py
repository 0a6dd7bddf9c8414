"""Nothing secret is shown or stored in clear (issue 41): credentials recognised by what they are in the
dry run, in error messages, in the Python API's reprs and dicts, in a local run's output and files."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

import cloudtrain
from cloudtrain.cli import main
from cloudtrain.errors import ConfigError
from cloudtrain.secrets.masking import MASK, ValueMasker
from tests.secrets.credentials import FORMATS, PEM

SAGEMAKER = """\
name: demo
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://my-bucket/team
machine: {type: ml.m5.xlarge}
package: {path: trainer}
"""
#: env: values that must not be shown: by name (any value) and by what the value is
ENV = {
    "DB_PASS": "plain-db-value-1",
    "MYSQL_PWD": "plain-mysql-value-2",
    "STRIPE": FORMATS["Stripe live key"][0],
    "NPM": FORMATS["npm token"][0],
    "PYPI": FORMATS["PyPI token"][0],
    "CACHE_URL": FORMATS["Redis URL, no user"][0],
    "STORAGE": FORMATS["Azure storage connection string"][0],
    "HOOK": FORMATS["Slack webhook"][0],
}
SECRETS = (
    ["plain-db-value-1", "plain-mysql-value-2"]
    + [
        FORMATS[k][1]
        for k in ("Stripe live key", "npm token", "PyPI token", "Redis URL, no user", "Azure storage connection string")
    ]
    + [FORMATS["Slack webhook"][1], "plain-api-value", FORMATS["Hugging Face token"][0]]
)
JOB = (
    SAGEMAKER
    + "env:\n"
    + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in ENV.items())
    + "args: [--api-key=plain-api-value]\n"
    + f"hyperparameters: {{hf_token: {FORMATS['Hugging Face token'][0]}, epochs: 3}}\n"
)


def _assert_hidden(text: str) -> None:
    shown = [s for s in SECRETS if s in text]
    assert shown == [], shown
    assert MASK in text


@pytest.mark.parametrize("output", ["text", "json"])
def test_the_dry_run_shows_no_secret_of_env_args_or_hyperparameters(project, capsys, output):
    config = project(JOB)
    assert main(["submit", str(config), "--dry-run", "-o", output]) == 0
    out, err = capsys.readouterr()
    _assert_hidden(out + err)
    if output == "text":
        assert "--api-key=*** --hf_token=*** --epochs=3" in out  # the summary's command line
        assert '"CACHE_URL": "***"' in out and '"DB_PASS": "***"' in out


@pytest.mark.parametrize(
    ("config", "sets", "secret"),
    [
        (SAGEMAKER + "secrets: {HF_TOKEN: " + FORMATS["Hugging Face token"][0] + "}\n", [], "hf_QwErTy"),
        (SAGEMAKER, ["--set", "secrets.DB=plain-db-secret-9"], "plain-db-secret-9"),
        (SAGEMAKER, ["--set", "secrets.DB=shell:plain db secret"], "plain db secret"),
        (SAGEMAKER + "env: {DB_PASSWORD: 84736251}\n", [], "84736251"),
    ],
    ids=["secrets value", "--set secrets value", "shell: with a value", "env type error"],
)
def test_a_refusal_never_echoes_the_value(project, capsys, config, sets, secret):
    path = project(config)
    assert main(["validate", str(path), *sets]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("error: ") and secret not in out + err, err


def test_the_python_api_shows_no_secret_in_reprs_dicts_and_errors(project):
    config = cloudtrain.load_config(project(JOB), overrides={"env.EXTRA_TOKEN": "plain-extra-value-3"})
    texts = [repr(config), repr(config.loaded), repr(config.loaded.config), repr(config.spec)]
    texts += [str(config), str(config.loaded.config), str(config.spec)]
    plan = cloudtrain.plan(config)
    texts += [repr(plan), json.dumps(plan.to_dict())]
    for text in texts:
        _assert_hidden(text)
        assert "plain-extra-value-3" not in text
    with pytest.raises(ConfigError) as refused:
        cloudtrain.load_config(project(SAGEMAKER), overrides={"secrets.DB": "plain-db-secret-9"})
    assert "plain-db-secret-9" not in str(refused.value) + repr(refused.value) + str(refused.value.args)


def test_an_error_of_any_kind_masks_a_credential_in_its_text():
    error = cloudtrain.errors.BackendError(f"cannot reach {FORMATS['Postgres URL'][0]}", hint=FORMATS["npm token"][0])
    assert "pg-S3cret!" not in str(error) and "npm_a1B2" not in str(error)
    assert "postgresql://trainer:***@db.internal" in str(error)


PRINTER = "import os, sys\nprint(os.environ['KEY_PEM'])\nprint(open(sys.argv[1]).read())\nprint('done')\n"


def test_a_local_replica_printing_a_private_key_shows_none_of_its_lines(tmp_path):
    """The key the job knows (env) and one it reads from a file: every line masked, on screen and in the log."""
    from cloudtrain.backends.local.processes import Launch, ReplicaGroup

    other = PEM.replace("MIIEowIBAAKCAQEAu1SU", "MIIEpAIBAAKCAQEAzzzz")
    (tmp_path / "key.pem").write_text(other)
    env = {"PATH": os.environ["PATH"], "KEY_PEM": PEM}
    argv = [sys.executable, "-c", PRINTER, str(tmp_path / "key.pem")]
    group = ReplicaGroup([Launch("chief", argv, env, str(tmp_path), tmp_path / "chief.log")], mask=ValueMasker([PEM]))
    group.start()
    assert group.wait(timeout=60) is not None
    shown = [line.message for line in group.lines() if line.replica == "chief"]
    log = (tmp_path / "chief.log").read_text()
    for body in (PEM, other):
        for line in body.splitlines():
            assert line not in log and all(line not in s for s in shown), line
    assert "done" in shown and log.count(MASK) >= 2 * len(PEM.splitlines())


def test_local_sagemaker_contract_files_are_0600(tmp_path):
    """--local under the SageMaker contract: hyperparameters.json holds the values as the job reads them."""
    from cloudtrain.backends.local.backend import prepare
    from cloudtrain.backends.runner import contract
    from tests.backends.local.conftest import make_spec
    from tests.backends.local.test_local_contract import PKG

    spec = make_spec(tmp_path, cloud="sagemaker", hyperparameters={"hf_token": FORMATS["Hugging Face token"][0]})
    plans = contract.plan(spec, output_dir=str(tmp_path / "run"), ports=[0], package=PKG)
    prepare(plans)
    written = [Path(path) for plan in plans for path in plan.files]
    hps = next(p for p in written if p.name == "hyperparameters.json")
    assert FORMATS["Hugging Face token"][0] in hps.read_text()  # the job reads the real value
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in written} == {p.name: 0o600 for p in written}
