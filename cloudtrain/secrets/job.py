"""What a job with ``secrets:`` carries: the references as ``CLOUDTRAIN_SECRET_<NAME>`` variables of
the request, and the launcher (:mod:`cloudtrain.secrets.launcher`) in its package or source dir.

The launcher is read here as a file, never imported: it speaks HTTP (``urllib.request``, ``http.client``,
``ssl``, ``email``), which a submit or ``--dry-run`` never needs. Its two names are written here as it
writes them (tests/secrets/test_launcher.py holds them equal)."""

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
