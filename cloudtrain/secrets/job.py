"""What a job with ``secrets:`` carries: ``CLOUDTRAIN_SECRET_<NAME>`` references, and the launcher, read here as a file
and never imported (it speaks HTTP, which a submit never needs)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

LAUNCHER_SOURCE = Path(__file__).with_name("launcher.py")
PACKAGE = "cloudtrain_secrets"  # what Vertex runs: python -m cloudtrain_secrets
MODULE_FILE = "cloudtrain_secrets.py"  # beside cloudtrain_launch.py in a SageMaker source dir
RUN_MODULE_ENV = "CLOUDTRAIN_RUN_MODULE"  # launcher.RUN_MODULE_ENV
SECRET_PREFIX = "CLOUDTRAIN_SECRET_"  # launcher.SECRET_PREFIX


def reference_env(secrets: Mapping[str, str]) -> dict[str, str]:
    """``{"HF_TOKEN": "gcp:…"}`` → ``{"CLOUDTRAIN_SECRET_HF_TOKEN": "gcp:…"}``: references, never values."""
    return {f"{SECRET_PREFIX}{name}": ref for name, ref in secrets.items()}


def sdist_files(secrets: Mapping[str, str]) -> dict[str, str]:
    """The ``cloudtrain_secrets`` package added to the sdist of a job with secrets (none without)."""
    if not secrets:
        return {}
    return {f"{PACKAGE}/__init__.py": "", f"{PACKAGE}/__main__.py": LAUNCHER_SOURCE.read_text(encoding="utf-8")}
