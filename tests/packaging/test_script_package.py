"""The package of a ``package.script`` job: the source folder as data, the launcher, the requirements."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from cloudtrain.errors import PackagingError
from cloudtrain.packaging import build_script_sdist
from cloudtrain.packaging.script import PACKAGE, check_script, extract_sources, has_setup_py
from tests.packaging.sdist_helpers import member_bytes

FIXTURES = Path(__file__).resolve().parents[1] / "packages"

# Prints what a SageMaker script sees: its argv, where it runs, the SM_* variables.
PROBE = """
import json, os, sys
print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(),
                  "sm": {k: v for k, v in os.environ.items() if k.startswith("SM_")}}))
"""


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A copy of the SageMaker script fixture, safe to modify."""
    dst = tmp_path / "src" / "sm_script"
    shutil.copytree(FIXTURES / "sm_script", dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _names(sdist: Path) -> list[str]:
    with tarfile.open(sdist) as tar:
        return sorted(m.name for m in tar.getmembers() if m.isfile())


def test_the_source_folder_goes_in_unchanged_beside_the_launcher(source, tmp_path):
    (source / "utils").mkdir()
    (source / "utils" / "helpers.py").write_text("X = 1\n")
    built = build_script_sdist(source, tmp_path / "dist", "mnist-2.py")
    top = f"{built.name}-{built.version}"
    assert built.name == "sm_script" and built.version == "0.0.0"
    assert _names(built.path) == sorted(
        [
            f"{top}/PKG-INFO",
            f"{top}/pyproject.toml",
            f"{top}/setup.py",
            f"{top}/{PACKAGE}/__init__.py",
            f"{top}/{PACKAGE}/__main__.py",
            f"{top}/{PACKAGE}/script.json",
            f"{top}/{PACKAGE}/src/mnist-2.py",
            f"{top}/{PACKAGE}/src/utils/helpers.py",
        ]
    )
    out = tmp_path / "code"
    assert extract_sources(built.path, out) == ["mnist-2.py", "utils/helpers.py"]
    assert (out / "mnist-2.py").read_bytes() == (source / "mnist-2.py").read_bytes()
    assert not has_setup_py(built)


def test_same_folder_same_bytes(source, tmp_path):
    first = build_script_sdist(source, tmp_path / "a", "mnist-2.py")
    os.utime(source / "mnist-2.py", (1, 1))
    second = build_script_sdist(source, tmp_path / "b", "mnist-2.py")
    assert first.sha256 == second.sha256


def test_requirements_txt_and_setup_py_become_the_package_requirements(source, tmp_path):
    (source / "requirements.txt").write_text("# the toolkit installs these\npandas>=1.5\n\nscikit-learn\n")
    (source / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='mnist-job', version='1.2', install_requires=['pyyaml'])\n"
    )
    built = build_script_sdist(source, tmp_path / "dist", "mnist-2.py", requirements=["rich"])
    assert built.requirements == ("pyyaml", "rich", "pandas>=1.5", "scikit-learn")
    assert (built.name, built.version) == ("mnist_job", "1.2")
    assert has_setup_py(built)
    assert "setup.py" in built.metadata


@pytest.mark.parametrize(
    ("script", "words"),
    [
        ("missing.py", "not found"),
        ("../escape.py", "not a relative path"),
        ("-rf.py", "not a relative path"),
        ("/abs/train.py", "not a relative path"),
        ("run.sh", "not a Python file"),
    ],
)
def test_bad_script_names_are_one_line(source, script, words):
    with pytest.raises(PackagingError, match=words):
        check_script(source, script)


def test_an_ignored_script_is_refused(source):
    (source / ".cloudtrainignore").write_text("mnist-2.py\n")
    with pytest.raises(PackagingError, match="excluded"):
        check_script(source, "mnist-2.py")


def _installed(built, site: Path) -> None:
    """What pip leaves in site-packages: the cloudtrain_script package folder."""
    with tarfile.open(built.path) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if member.isfile() and parts[1] == PACKAGE:
                target = site.joinpath(*parts[1:])
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(member_bytes(tar, member))


def _launch(site: Path, work: Path, env: dict[str, str], *args: str) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SM_", "AIP_", "CLUSTER_SPEC", "TF_CONFIG"))}
    result = subprocess.run(
        [sys.executable, "-m", PACKAGE, *args],
        cwd=work,
        capture_output=True,
        text=True,
        env={**clean, "PYTHONPATH": str(site), **env},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_launcher_runs_a_hyphenated_script_from_a_copy_with_sagemaker_variables(tmp_path):
    folder = tmp_path / "my code"  # not even a distribution name
    folder.mkdir()
    (folder / "train-v2.py").write_text(PROBE)
    built = build_script_sdist(folder, tmp_path / "dist", "train-v2.py")
    assert built.name == "script"
    site = tmp_path / "site"
    _installed(built, site)
    cluster = {
        "cluster": {
            "workerpool0": ["cmle-training-workerpool0-0:2222"],
            "workerpool1": ["cmle-training-workerpool1-0:2222", "cmle-training-workerpool1-1:2222"],
        },
        "environment": "cloud",
        "task": {"type": "workerpool1", "index": 1},
    }
    env = {
        "CLUSTER_SPEC": json.dumps(cluster),
        "AIP_MODEL_DIR": f"{tmp_path}/out/model/",
        "SM_NUM_GPUS": "4",
        "SM_CHANNEL_TRAINING": "/gcs/b/train",
    }
    got = _launch(site, tmp_path / "work", env, "--epochs", "2", "--model_dir", "gs://b/out/model/")
    code = tmp_path / "work" / "code"
    assert got["cwd"] == str(code) and (code / "train-v2.py").is_file()
    assert got["argv"] == ["train-v2.py", "--epochs", "2", "--model_dir", "gs://b/out/model/"]
    assert got["sm"] == {
        "SM_HOSTS": json.dumps(["workerpool0-0", "workerpool1-0", "workerpool1-1"]),
        "SM_CURRENT_HOST": "workerpool1-1",
        "SM_MODEL_DIR": f"{tmp_path}/out/model",
        "SM_OUTPUT_DATA_DIR": f"{tmp_path}/out/output/data",
        "SM_NUM_GPUS": "4",
        "SM_CHANNEL_TRAINING": "/gcs/b/train",
    }
    assert (tmp_path / "out" / "model").is_dir() and (tmp_path / "out" / "output" / "data").is_dir()


def test_the_launcher_maps_gcs_to_its_fuse_path_and_runs_a_module_when_there_is_a_setup_py(tmp_path):
    from cloudtrain.packaging.script_main import sagemaker_env

    assert sagemaker_env({"AIP_MODEL_DIR": "gs://b/jobs/j1/model/"}) == {
        "SM_HOSTS": '["workerpool0-0"]',
        "SM_CURRENT_HOST": "workerpool0-0",
        "SM_MODEL_DIR": "/gcs/b/jobs/j1/model",
        "SM_OUTPUT_DATA_DIR": "/gcs/b/jobs/j1/output/data",
    }
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "train.py").write_text(PROBE)
    (folder / "setup.py").write_text("from setuptools import setup\nsetup(name='t', version='1')\n")
    site = tmp_path / "site"
    _installed(build_script_sdist(folder, tmp_path / "dist", "train.py"), site)
    got = _launch(site, tmp_path / "work", {}, "--lr", "0.1")
    # As the SageMaker toolkit: a folder with setup.py runs its entry point as a module.
    assert got["argv"] == [str(tmp_path / "work" / "code" / "train.py"), "--lr", "0.1"]
