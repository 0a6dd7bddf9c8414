"""Which env: values are shown as ***, and the --debug lines."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cloudtrain.secrets import masking
from cloudtrain.secrets.masking import MASK, ValueMasker, looks_secret, mask_args, mask_text, masked, secret_values
from tests.secrets.credentials import AZURE_KEY, FORMATS, PEM, PUTTY


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("WANDB_API_KEY", "x"),
        ("HF_TOKEN", "x"),
        ("DB_PASSWORD", "x"),
        ("CLIENT_SECRET", "x"),
        ("GOOGLE_CREDENTIALS", "x"),
        ("BASIC_AUTH", "x"),
        ("V", "AKIAIOSFODNN7EXAMPLE"),
        ("V", "ghp_" + "a" * 36),
        ("V", "hf_" + "b" * 34),
        ("V", "sk-" + "c" * 40),
        ("V", "-----BEGIN RSA PRIVATE KEY-----"),
        ("V", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.abcdefghijkl"),
        ("V", "postgres://me:pw@db:5432/x"),
        ("V", "xoxb-1234567890-abcdef"),
    ],
)
def test_secret_looking_names_and_values_are_masked(name, value):
    assert looks_secret(name, value)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TF_CPP_MIN_LOG_LEVEL", "1"),
        ("WANDB_PROJECT", "mnist"),
        ("DATA_URL", "https://example.com/data"),
        ("MODEL", "sk-short"),
        ("HF_HOME", "/cache/hf"),
    ],
)
def test_ordinary_settings_are_shown(name, value):
    assert not looks_secret(name, value)


def test_value_masker_masks_longest_first_and_skips_tiny_values():
    mask = ValueMasker(["abcd", "abcdef", "x"])
    assert mask("abcdef abcd x") == "*** *** x"


def test_debug_lines_of_the_cli_logger_mask_the_values(tmp_path):
    """What --debug shows (the cloudtrain loggers through the CLI's stderr handler) is masked too."""
    code = (
        "import logging, sys\n"
        "from cloudtrain.cli._group import _show_backend_notes\n"
        "from cloudtrain.secrets.masking import mask_logs\n"
        "_show_backend_notes(True)\n"
        "mask_logs(['wandb-0123456789'])\n"
        "logging.getLogger('cloudtrain.backends.x').debug('env %s', {'WANDB_API_KEY': 'wandb-0123456789'})\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stderr == "env {'WANDB_API_KEY': '***'}\n"


# --- issue 41: secrets recognised by what they are -------------------------------------------------


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_credential_format_is_masked_in_any_text(name):
    value, secret = FORMATS[name]
    shown = mask_text(f"starting: {value} (done)")
    assert secret not in shown and MASK in shown
    assert shown.startswith("starting: ") and shown.endswith(" (done)")  # what is around it stays


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("redis://:r3dis-Pa55word@cache:6379/0", "redis://:***@cache:6379/0"),
        ("https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/q1w2e3", "https://hooks.slack.com/services/***"),
        (
            "AccountName=acct;AccountKey=" + AZURE_KEY + ";EndpointSuffix=x",
            "AccountName=acct;AccountKey=***;EndpointSuffix=x",
        ),
    ],
)
def test_only_the_secret_part_of_a_url_or_connection_string_is_masked(value, shown):
    assert mask_text(value) == shown


@pytest.mark.parametrize(
    "text",
    [
        "PWD=/home/me/project",
        "https://example.com/data",
        "s3://bucket/key:with:colons",
        "loss=0.25 step=100",
        "sk-short",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert mask_text(text) == text


@pytest.mark.parametrize("name", ["DB_PASS", "MYSQL_PWD", "SMTP_PW", "GITHUB_CREDS", "AZURE_CONNECTION_STRING"])
def test_secret_like_env_names_are_masked_whatever_the_value(name):
    assert looks_secret(name, "plain-value-1")


@pytest.mark.parametrize("name", ["COMPASS_DIR", "PASSENGERS", "OLDPWD", "TF_CPP_MIN_LOG_LEVEL"])
def test_names_that_only_contain_a_secret_word_are_shown(name):
    assert not looks_secret(name, "x")


def test_args_hide_the_values_of_secret_options_and_credentials():
    args = [
        "--api-key=plain-api-value",
        "--password",
        "hunter22",
        "--key_dim=64",
        "--max_tokens=512",
        "--tokenizer=bert",
        "--lr",
        "0.1",
        "--url=redis://:r3dis-Pa55word@cache:6379/0",
        "--epochs=3",
    ]
    assert mask_args(args) == [
        "--api-key=***",
        "--password",
        "***",
        "--key_dim=64",
        "--max_tokens=512",
        "--tokenizer=bert",
        "--lr",
        "0.1",
        "--url=redis://:***@cache:6379/0",
        "--epochs=3",
    ]


def test_hyperparameters_hide_secret_names_and_credentials_but_keep_numbers():
    hps = {"hf_token": "plain-hf-value", "tokenizer": "bert", "max_tokens": 512, "note": FORMATS["npm token"][0]}
    assert masked(hps, ValueMasker(secret_values(hyperparameters=hps))) == {
        "hf_token": MASK,
        "tokenizer": "bert",
        "max_tokens": 512,
        "note": MASK,
    }


def test_a_multi_line_value_is_masked_on_every_line_it_is_printed_on():
    mask = ValueMasker([PEM])
    shown = [mask(line + "\n") for line in PEM.splitlines()]
    assert all(line == "***\n" for line in shown), shown


def test_a_stream_masks_every_line_of_a_private_key_it_does_not_know():
    """A key the job reads from a file (no value cloudtrain knows) is masked from BEGIN to END."""
    mask = ValueMasker([]).stream()
    lines = ["epoch 1\n", *(line + "\n" for line in PEM.splitlines()), "epoch 2\n"]
    assert [mask(line) for line in lines] == ["epoch 1\n"] + ["***\n"] * len(PEM.splitlines()) + ["epoch 2\n"]
    putty = ValueMasker([]).stream()
    assert [putty(line) for line in PUTTY.splitlines()] == [MASK] * len(PUTTY.splitlines())


def test_every_rule_is_data_with_its_source():
    doc = json.loads((Path(masking.__file__).with_name("formats.json")).read_text())
    assert len(doc["rules"]) >= 20
    for rule in doc["rules"]:
        assert rule["name"] and rule["source"] and re.compile(rule["pattern"])
    assert any("detect-secrets" in rule["source"] for rule in doc["rules"])


def test_every_format_is_exercised_by_a_sample_here():
    """Each rule (its pattern and its hints) masks at least one of the samples the tests above check."""
    for rule in masking.rules().formats:
        assert any(rule.pattern.search(v) and mask_text(v) != v for v, _ in FORMATS.values()), rule.name
