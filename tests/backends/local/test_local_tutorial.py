"""The tutorial user's package (tests/packages/tutorial_mgpu) runs with --local under both contracts.

A setup.py next to trainer/ with install_requires, Keras + MirroredStrategy with TensorBoard
and ModelCheckpoint callbacks, the model saved to the platform's model dir: the run resolves
scikit-learn for real into the package's env, TensorBoard is there as in the cloud image, and
the model lands where the platform keeps it. Both contracts share image layers with the other
TF tests (the cache in ``tf_cache`` is kept across runs).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.packaging.conftest import FIXTURES

pytestmark = [pytest.mark.slow, pytest.mark.tf]

CONFIG = """\
name: mgpu
backend: local
target: {cloud}
region: {region}
machine: {{type: {machine}}}
package: {{path: tutorial_mgpu/trainer, module: trainer.task}}
image: {{tensorflow: "{tf}"}}
args: [--epochs=2]
"""
# Vertex: its default image (TF 2.17, Python 3.10). SageMaker has no 2.17 image: 2.16 (Python 3.10).
CONTRACTS = {
    "vertex": {"region": "us-central1", "machine": "n1-standard-4", "tf": "2.17"},
    "sagemaker": {"region": "us-east-1", "machine": "ml.m5.xlarge", "tf": "2.16"},
}


def _project(tmp_path: Path, cloud: str, setup_py: str | None = None) -> Path:
    shutil.copytree(
        FIXTURES / "tutorial_mgpu", tmp_path / "tutorial_mgpu", ignore=shutil.ignore_patterns("__pycache__")
    )
    if setup_py is not None:
        (tmp_path / "tutorial_mgpu" / "setup.py").write_text(setup_py)
    config = tmp_path / "job.yaml"
    config.write_text(CONFIG.format(cloud=cloud, **CONTRACTS[cloud]))
    return config


def _submit(config: Path, tmp_path: Path, tf_cache: Path) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(tf_cache), "COLUMNS": "250"}  # no folded lines
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "cloudtrain",
            "submit",
            "--config",
            str(config),
            "--local",
            "--set",
            f"output_dir={tmp_path / 'run'}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.parametrize("cloud", ["vertex", "sagemaker"])
def test_the_tutorial_package_runs_under_both_contracts(cloud, tmp_path, tf_cache):
    result = _submit(_project(tmp_path, cloud), tmp_path, tf_cache)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    assert "mgpu-0.2-" in out and "tutorial_mgpu/setup.py (beside the package, read)" in out
    assert f"TensorFlow {CONTRACTS[cloud]['tf']}" in out
    assert "Number of devices: 1" in out and "Epoch 2/2" in out
    run = tmp_path / "run"
    model = run / "model" / "digits.keras" if cloud == "vertex" else run / "algo-1" / "model" / "digits.keras"
    assert model.is_file(), sorted(str(p.relative_to(run)) for p in run.rglob("*"))[:50]
    events = list(run.rglob("events.out.tfevents.*"))
    assert events, "the TensorBoard callback wrote nothing"
    assert "is empty" not in out


def test_an_uninstallable_pin_fails_before_training_in_one_line(tmp_path, tf_cache):
    # The first source article's own setup.py: h5py 2.7.0 has no wheel for any current Python
    # and its sdist no longer builds, so the cloud's pip fails; so does --local, before training.
    setup_py = (
        "from setuptools import find_packages, setup\n"
        "setup(name='mgpu', version='0.2', packages=find_packages(), install_requires=['h5py==2.7.0'])\n"
    )
    result = _submit(_project(tmp_path, "vertex", setup_py), tmp_path, tf_cache)
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "requirement 'h5py==2.7.0' of mgpu 0.2 cannot be installed" in errors[0]
    assert "Traceback" not in result.stderr
    assert "Epoch" not in result.stdout and not (tmp_path / "run" / "model").exists()
