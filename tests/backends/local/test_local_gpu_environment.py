"""``--local`` on a GPU host: the image layer's TensorFlow is the build with its own CUDA libraries.

Offline: the resolved requirement set and the render (the dry run). No GPU here, so the build itself
and a trainer that sees the GPU are checked only on a GPU machine (docs/how-to/local.md)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cloudtrain.backends.local.backend import LocalBackend
from tests.backends.local.conftest import bare_image, make_spec


def tf_layer():
    return replace(bare_image(), packages=("tensorflow==2.17.*", "tensorboard"), tensorflow="2.17")


def backend(tmp_path, *, gpus: int, visible: bool) -> LocalBackend:
    return LocalBackend(
        cache_root=tmp_path / "cache",
        gpu_count=lambda: gpus,
        gpu_visible=lambda: visible,
        image_for=lambda spec: tf_layer(),
        log=lambda m: None,
    )


@pytest.mark.parametrize(
    ("gpus", "visible", "tensorflow", "why"),
    [
        (2, False, "tensorflow[and-cuda]==2.17.*", "for 2 GPUs here"),
        (1, False, "tensorflow[and-cuda]==2.17.*", "for 1 GPU here"),
        (0, True, "tensorflow[and-cuda]==2.17.*", "for a GPU visible here"),
        (0, False, "tensorflow==2.17.*", "CPU only"),
    ],
)
def test_a_gpu_here_installs_tensorflow_with_its_cuda(gpus, visible, tensorflow, why, fake_package, tmp_path):
    rendered = backend(tmp_path, gpus=gpus, visible=visible).render(make_spec(tmp_path), fake_package)
    layer = rendered["image_environment"]
    assert layer["packages"] == [tensorflow, "tensorboard"]
    assert layer["tensorflow_build"].startswith(tensorflow) and why in layer["tensorflow_build"]
    assert not (tmp_path / "cache").exists()  # a render builds nothing


def test_the_gpu_layer_is_an_environment_of_its_own(fake_package, tmp_path):
    """A GPU host's layer never replaces the CPU one: they are two cached environments."""
    gpu = backend(tmp_path, gpus=1, visible=False).render(make_spec(tmp_path), fake_package)
    cpu = backend(tmp_path, gpus=0, visible=False).render(make_spec(tmp_path), fake_package)
    assert gpu["image_environment"]["layer"] != cpu["image_environment"]["layer"]
    assert gpu["environment"] != cpu["environment"]
