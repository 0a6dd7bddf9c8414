"""Which Python and TensorFlow stand in for the cloud's image, and where the Python is found."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from cloudtrain.backends.runner import image as image_mod
from cloudtrain.backends.runner.image import Interpreter, find_python, resolve_image, supported_pythons
from cloudtrain.errors import UsageError


def finder(*versions: str):
    """A machine that has exactly these Python versions."""

    def find(version, setting=None):
        if setting and setting != version:
            return None
        return Interpreter(f"/fake/python{version}", version) if version in versions else None

    return find


def test_the_images_own_python_and_tensorflow_plus_what_the_image_ships():
    img = resolve_image("vertex", "2.17", find=finder("3.10", "3.11", "3.13"))
    assert img.python.version == "3.10" and img.tensorflow == "2.17" and img.note is None
    assert img.packages[0] == "tensorflow==2.17.*" and "tensorboard" in img.packages
    assert img.describe() == "Python 3.10 + TensorFlow 2.17 + tensorboard"


def test_the_clouds_default_tensorflow_when_the_config_names_none():
    img = resolve_image("sagemaker", None, find=finder("3.10", "3.12"))
    assert (img.tensorflow, img.python.version, img.wanted_python) == ("2.21", "3.12", "3.12")


def test_another_supported_python_when_the_images_is_missing_says_so_in_the_description():
    img = resolve_image("vertex", "2.17", find=finder("3.11", "3.13"))
    assert (img.python.version, img.tensorflow, img.note) == ("3.11", "2.17", None)
    assert img.describe().startswith("Python 3.11 (the image has 3.10) + TensorFlow 2.17")


def test_only_a_newer_python_means_one_line_naming_the_tensorflow_used_instead():
    img = resolve_image("vertex", "2.17", find=finder("3.13"))
    assert (img.python.version, img.tensorflow) == ("3.13", "2.20")
    assert img.note == (
        "mapped: image.tensorflow: 2.17 → 2.20 (locally: TensorFlow 2.17, the image's, has no wheels for Python 3.13 "
        "and no Python 3.9–3.12 was found (PATH, pyenv's versions folder and this interpreter); the nearest "
        "version Python 3.13 installs, newer first)"
    )


def test_local_python_as_a_version_is_the_only_one_tried():
    img = resolve_image("vertex", "2.17", python="3.12", find=finder("3.10", "3.12"))
    assert img.python.version == "3.12"


def test_local_python_as_a_path(tmp_path):
    real = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    img = resolve_image("vertex", "2.17", python=real)
    assert img.python.path == real
    assert img.tensorflow == ("2.17" if version in supported_pythons("2.17") else "2.20")
    with pytest.raises(UsageError, match="local.python .* does not run"):
        resolve_image("vertex", "2.17", python=str(tmp_path / "python"))


def test_no_python_at_all_is_one_clear_error():
    with pytest.raises(UsageError, match="no Python here can install TensorFlow 2.17"):
        resolve_image("vertex", "2.17", find=finder())


def test_same_layer_for_the_same_python_and_packages_whatever_the_cloud():
    a = resolve_image("vertex", "2.16", find=finder("3.10"))
    b = resolve_image("sagemaker", "2.16", find=finder("3.10"))
    assert a.key == b.key  # both clouds' images ship the same extras: one layer, built once


def test_tensorflow_wheel_pythons_are_data():
    assert supported_pythons("2.17") == ["3.9", "3.10", "3.11", "3.12"]
    assert supported_pythons("2.21") == ["3.10", "3.11", "3.12", "3.13"]
    assert supported_pythons("9.9") == []


def test_pyenvs_versions_folder_is_searched(tmp_path, monkeypatch):
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    bin_dir = tmp_path / "versions" / f"{version}.99" / "bin"
    bin_dir.mkdir(parents=True)
    real = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    (bin_dir / f"python{version}").symlink_to(real)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # nothing on PATH
    # and not this interpreter's version
    monkeypatch.setattr("cloudtrain.backends.runner.image.sys.version_info", (3, 0, 0))
    image_mod.probe.cache_clear()
    found = find_python(version)
    assert found is not None and found.version == version and Path(found.path) == Path(real)
