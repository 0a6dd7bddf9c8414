"""One cloud's libraries per user: without a cloud's extra, what needs it is one line naming the
install command (exit 2, no traceback), and what does not need it (a dry run, the other cloud's
plan) still works. The SDKs are hidden by a ``sys.meta_path`` blocker in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

BLOCKER = """\
import importlib.abc, sys
HIDDEN = {hidden!r}
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Hide())
"""
VERTEX_ONLY = ("boto3", "botocore", "sagemaker_core")
SAGEMAKER_ONLY = ("google", "grpc")


def run(hidden: tuple[str, ...], code: str, tmp_path) -> subprocess.CompletedProcess:
    script = BLOCKER.format(hidden=set(hidden)) + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "CLOUDTRAIN_CACHE_DIR": str(tmp_path),
            "CLOUDSDK_CONFIG": str(tmp_path / "gcloud"),
        },
    )


CLI = """\
from cloudtrain.cli import main
raise SystemExit(main({args!r}))
"""


def test_a_vertex_submit_without_the_vertex_extra_is_one_line_naming_the_install(tmp_path) -> None:
    done = run(SAGEMAKER_ONLY, CLI.format(args=["submit", "--config", "job_configs/gpu4.yaml", "--detach"]), tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()  # one line
    assert line.startswith("error: the Vertex AI libraries are not installed (no module 'google.")
    assert line.endswith("') — pip install 'cloudtrain[vertex]'")
    assert "Traceback" not in done.stderr


def test_a_sagemaker_submit_without_the_sagemaker_extra_names_its_install(tmp_path) -> None:
    done = run(
        VERTEX_ONLY, CLI.format(args=["submit", "--config", "job_configs/sagemaker-gpu4.yaml", "--detach"]), tmp_path
    )
    assert done.returncode == 2, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith("error: the SageMaker libraries are not installed (no module 'boto")
    assert last.endswith("— pip install 'cloudtrain[sagemaker]'")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("hidden", [VERTEX_ONLY + SAGEMAKER_ONLY])
def test_a_dry_run_needs_no_cloud_library(hidden, tmp_path) -> None:
    done = run(
        hidden, CLI.format(args=["submit", "--config", "job_configs/gpu4.yaml", "--dry-run", "-o", "json"]), tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["request"]["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorCount"] == 4


def test_the_python_api_raises_the_same_error_and_prints_nothing(tmp_path) -> None:
    code = """\
    import cloudtrain
    from cloudtrain.errors import MissingExtra
    try:
        cloudtrain.submit(cloudtrain.load_config("job_configs/gpu4.yaml"))
    except MissingExtra as exc:
        print(exc.exit_code, exc.extra, exc.hint)
    """
    done = run(SAGEMAKER_ONLY, code, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "2 vertex pip install 'cloudtrain[vertex]'\n", "")
