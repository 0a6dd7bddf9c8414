"""Which Python and TensorFlow stand in for the cloud's image, and where the Python is found."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from cloudtrain.backends.runner import env_keys
from cloudtrain.backends.runner import image as image_mod
from cloudtrain.backends.runner.image import Interpreter, resolve_image, supported_pythons
from cloudtrain.backends.runner.interpreters import find_python, probe
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
    assert {"cloudml-hypertune", "pandas", "scikit-learn"} <= set(img.packages)  # what Vertex code imports undeclared
    assert img.date == "2024-10-24"  # TensorFlow 2.17's last release: unpinned packages resolve as of then
    assert img.describe() == (
        "Python 3.10 + TensorFlow 2.17 + tensorboard, cloudml-hypertune, pandas and 7 more "
        "(as of 2024-10-24, the image's)"
    )


def test_the_slim_layer_is_tensorflow_and_tensorboard_only_as_of_the_images_day():
    img = resolve_image("sagemaker", "2.11", find=finder("3.9"), slim=True)
    assert img.packages == ("tensorflow==2.11.*", "pip", "setuptools", "wheel", "tensorboard")
    assert img.date == "2023-03-20" and img.nearest == ()  # TF 2.11.1's day, on every cloud: NumPy 1 here too
    assert img.key != resolve_image("sagemaker", "2.11", find=finder("3.9")).key


@pytest.mark.parametrize(
    ("cloud", "tf", "python", "pins", "date"),
    [
        # from tensorflow/training/docker/2.11/py3/Dockerfile.cpu: its pins as written, Pillow's missing comma read
        ("sagemaker", "2.11", "3.9", {"scipy==1.8.0", "pillow<9.1.0,>=9.0.0", "tensorflow-io==0.27.0"}, "2023-08-24"),
        ("sagemaker", "2.6", "3.8", {"pandas==1.2.5", "tensorflow-datasets==4.5.2"}, "2022-07-15"),
        ("vertex", "2.8", "3.10", {"cloudml-hypertune", "pandas"}, "2022-11-16"),
    ],
)
def test_each_images_packages_python_and_day_come_from_its_build(cloud, tf, python, pins, date):
    img = resolve_image(cloud, tf, find=finder("3.8", "3.9", "3.10"))
    assert pins <= set(img.packages) and img.date == date and img.python.version == python
    assert not {"horovod", "mpi4py", "tensorflow-cpu", "sagemaker"} & {p.split("=")[0] for p in img.packages}
    if cloud == "sagemaker":  # pinned there: where the pins do not install, the same names as of the same day
        assert "scipy" in img.nearest or "pandas" in img.nearest
        assert img.nearest[0] == f"tensorflow=={tf}.*" and not any("==" in p for p in img.nearest[1:])


def test_tensorflow_2_11_and_older_resolve_before_numpy_2():
    """NumPy 2.0.0 was released on 2024-06-16: every image of TensorFlow <= 2.11 resolves before it."""
    for cloud in ("vertex", "sagemaker"):
        for tf in ("2.4", "2.8", "2.10", "2.11"):
            date = resolve_image(cloud, tf, find=finder("3.7", "3.8", "3.9", "3.10")).date
            assert date is not None and date < "2024-06-16", (cloud, tf, date)


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
    img = resolve_image("vertex", "2.17", find=find_python, probe=probe, python=real)
    assert img.python.path == real
    assert img.tensorflow == ("2.17" if version in supported_pythons("2.17") else "2.20")
    with pytest.raises(UsageError, match="local.python .* does not run"):
        resolve_image("vertex", "2.17", find=find_python, probe=probe, python=str(tmp_path / "python"))


def test_no_python_at_all_is_one_clear_error():
    with pytest.raises(UsageError, match="no Python here can install TensorFlow 2.17"):
        resolve_image("vertex", "2.17", find=finder())


def test_same_slim_layer_for_the_same_python_whatever_the_cloud_but_each_images_own():
    a = resolve_image("vertex", "2.16", find=finder("3.10"), slim=True)
    b = resolve_image("sagemaker", "2.16", find=finder("3.10"), slim=True)
    assert a.key == b.key  # the slim layers are the same: one layer, built once
    assert (
        resolve_image("vertex", "2.16", find=finder("3.10")).key
        != resolve_image("sagemaker", "2.16", find=finder("3.10")).key
    )


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
    monkeypatch.setattr("cloudtrain.backends.runner.interpreters.sys.version_info", (3, 0, 0))
    probe.cache_clear()
    found = find_python(version)
    assert found is not None and found.version == version and Path(found.path) == Path(real)


@pytest.mark.parametrize(
    ("uri", "known"),
    [
        ("us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-3:latest", ("vertex", "2.3", None)),
        ("europe-docker.pkg.dev/vertex-ai/training/tf-gpu.2-14.py310:latest", ("vertex", "2.14", "3.10")),
        ("gcr.io/deeplearning-platform-release/tf2-gpu.2-11", ("vertex", "2.11", None)),
        (
            "763104351884.dkr.ecr.eu-west-1.amazonaws.com/tensorflow-training:2.11.0-gpu-py39-cu112-ubuntu20.04-sagemaker",
            ("sagemaker", "2.11", "3.9"),
        ),
        (
            "727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/tensorflow-training:2.6-cpu-py38",
            ("sagemaker", "2.6", "3.8"),
        ),
        ("us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-11:latest", None),  # a serving image, not a training one
        ("gcr.io/my-project/trainer:v3", None),
        ("123.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.1.0-gpu-py310", None),
    ],
)
def test_a_prebuilt_images_uri_names_its_cloud_tensorflow_and_python(uri, known):
    assert image_mod.prebuilt_image(uri) == known


def _spec(tmp_path, uri, *, tensorflow=None, layer="image", cloud="vertex"):
    import dataclasses

    from tests.backends.local.conftest import make_spec

    spec = make_spec(tmp_path, cloud=cloud)
    return dataclasses.replace(spec, image_uri=uri, tensorflow_version=tensorflow, local_layer=layer)


def test_a_prebuilt_image_uri_builds_that_images_tensorflow_locally(tmp_path):
    find = finder("3.7", "3.8", "3.9", "3.10", "3.12")
    img = image_mod.image_for(_spec(tmp_path, "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-3:latest"), find)
    assert (img.cloud, img.tensorflow, img.note) == ("vertex", "2.3" if "2.3" in _versions() else img.tensorflow, None)
    uri = "763104351884.dkr.ecr.us-west-2.amazonaws.com/tensorflow-training:2.9.1-cpu-py39-ubuntu20.04-sagemaker"
    img = image_mod.image_for(_spec(tmp_path, uri), find)  # a config born on Vertex, an estimator's image_uri
    assert (img.cloud, img.tensorflow, img.python.version, img.date) == ("sagemaker", "2.9", "3.9", "2023-02-13")


def _versions():
    from cloudtrain.catalog._data import load

    return load("local_images")["tensorflow_pythons"]


def test_a_custom_image_says_in_one_line_what_local_uses_instead_and_how_to_choose(tmp_path):
    find = finder("3.10", "3.12")
    img = image_mod.image_for(_spec(tmp_path, "gcr.io/acme/trainer:v3"), find)
    assert img.tensorflow == "2.17" and "\n" not in (img.note or "")
    assert img.note == (
        "image gcr.io/acme/trainer:v3 is not a prebuilt TensorFlow image cloudtrain knows: --local runs the vertex "
        "TensorFlow 2.17 image's packages instead; set image.tensorflow to the TensorFlow it holds "
        "(or local.layer: slim)"
    )
    chosen = image_mod.image_for(_spec(tmp_path, "gcr.io/acme/trainer:v3", tensorflow="2.12", layer="slim"), find)
    assert (chosen.tensorflow, chosen.note, chosen.date) == ("2.12", None, "2023-07-05")  # TF 2.12.1's day


@pytest.mark.slow
@pytest.mark.tf
def test_tensorflow_2_11s_image_layer_imports_with_numpy_1_and_what_the_image_ships(tf_cache):
    """The real layer (built once into the test cache, from uv's cache when it has the wheels): TF 2.11 sets no
    upper bound on NumPy, so resolved today it would get NumPy 2 and fail with ``_ARRAY_API not found``."""
    import subprocess

    from cloudtrain.backends.runner import venv

    image = resolve_image("vertex", "2.11", find=find_python)
    if image.tensorflow != "2.11":
        pytest.skip(image.note or "no Python here installs TensorFlow 2.11")
    path, _ = venv.ensure_image(image, root=tf_cache)
    code = "import numpy, pandas, hypertune, tensorflow as tf; print(numpy.__version__, tf.__version__)"
    out = subprocess.run([str(env_keys.env_python(path)), "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    numpy_version, tf_version = out.stdout.split()[-2:]
    assert numpy_version.startswith("1.") and tf_version.startswith("2.11.")
