"""Which env: values are shown as ***, and the --debug lines."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cloudtrain.secrets.masking import ValueMasker, looks_secret


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
