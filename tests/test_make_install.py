"""``make install`` gives a user the CLI with only the extras named (docs/how-to/install.md): the CLI
alone by default, a cloud's SDKs with ``EXTRAS=``, never the test tools; ``make dev`` (what
``make test`` runs on) keeps every extra. Installed into a scratch PREFIX from uv.lock, offline: uv's
cache holds the locked wheels once the developer environment was made."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

PROBE = """
import importlib.util, json
def found(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # its parent package is not there
        return False
names = ("cloudtrain", "google.cloud.aiplatform", "boto3", "matplotlib", "tensorflow", "pytest", "moto")
print(json.dumps({name: found(name) for name in names}))
"""


def _uv() -> str | None:
    return (
        os.environ.get("UV")
        or shutil.which("uv")
        or next((str(p) for p in [REPO / ".tools" / "bin" / "uv"] if p.exists()), None)
    )


def _install(prefix: Path, extras: str) -> dict[str, bool]:
    args = ["make", "--no-print-directory", "install", f"PREFIX={prefix}", f"EXTRAS={extras}"]
    if _uv():
        args.append(f"UV={_uv()}")
    env = {**os.environ, "UV_OFFLINE": "1"}
    done = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    cli = prefix / "bin" / "cloudtrain"
    version = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == "cloudtrain, version 0.1.0"
    python = prefix / "share" / "cloudtrain" / "venv" / "bin" / "python"
    import json

    return json.loads(subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, check=True).stdout)


def test_the_cli_alone_then_one_cloud_then_back(tmp_path) -> None:
    prefix = tmp_path / "home" / ".local"
    nothing = {"google.cloud.aiplatform": False, "boto3": False, "matplotlib": False, "tensorflow": False}
    assert _install(prefix, "") == {"cloudtrain": True, **nothing, "pytest": False, "moto": False}
    assert _install(prefix, "vertex") == {
        "cloudtrain": True,
        **nothing,
        "google.cloud.aiplatform": True,
        "pytest": False,
        "moto": False,
    }
    # named again with another extra: exactly that one (the vertex SDK is gone)
    assert _install(prefix, "sagemaker report") == {
        "cloudtrain": True,
        **nothing,
        "boto3": True,
        "matplotlib": True,
        "pytest": False,
        "moto": False,
    }


def test_the_installed_cli_runs_a_dry_run_from_another_folder(tmp_path) -> None:
    prefix = tmp_path / "p"
    _install(prefix, "")
    done = subprocess.run(
        [
            str(prefix / "bin" / "cloudtrain"),
            "submit",
            "--config",
            str(REPO / "job_configs" / "gpu4.yaml"),
            "--dry-run",
        ],
        cwd=tmp_path,
        env={**os.environ, "CLOUDTRAIN_CACHE_DIR": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Request (nothing was uploaded or created)" in done.stdout
