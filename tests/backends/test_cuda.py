"""Which TensorFlow build a GPU host's environment gets (cloudtrain.backends.cuda): pure functions."""

from __future__ import annotations

import pytest

from cloudtrain.backends import cuda

SHIPPED = ("tensorflow==2.17.*", "tensorboard", "setuptools>=62.3")


def test_gpus_get_tensorflow_with_its_own_cuda_and_nothing_else_changes():
    build = cuda.gpu_build(SHIPPED, gpus="4 GPUs per node")
    assert build.packages == ("tensorflow[and-cuda]==2.17.*", "tensorboard", "setuptools>=62.3")
    assert build.with_cuda
    assert build.line == "tensorflow[and-cuda]==2.17.* for 4 GPUs per node: TensorFlow with its own CUDA libraries"


def test_no_gpu_keeps_the_cpu_requirements():
    build = cuda.gpu_build(("tensorflow==2.20.*", "pandas"), gpus=None)
    assert build.packages == ("tensorflow==2.20.*", "pandas") and not build.with_cuda
    assert build.line.startswith("tensorflow==2.20.* (CPU only")


def test_cuda_from_the_cluster_keeps_the_plain_build_and_names_the_line():
    build = cuda.gpu_build(SHIPPED, gpus="2 GPUs per node", cuda_from="module load cuda/12.2")
    assert build.packages == SHIPPED and not build.with_cuda
    assert "CUDA from the cluster ('module load cuda/12.2')" in build.line


def test_a_tensorflow_before_2_14_has_no_cuda_build_and_says_so():
    build = cuda.gpu_build(("tensorflow==2.13.*", "tensorboard"), gpus="1 GPU here")
    assert build.packages == ("tensorflow==2.13.*", "tensorboard") and not build.with_cuda
    assert "TensorFlow 2.13 has no build with its own CUDA" in build.line


def test_an_image_without_tensorflow_is_left_alone():
    build = cuda.gpu_build(("setuptools>=62.3", "wheel"), gpus="8 GPUs here")
    assert build.packages == ("setuptools>=62.3", "wheel") and not build.with_cuda


@pytest.mark.parametrize(
    ("setup", "found"),
    [
        (["module load cuda/12.2", "source /fsx/env.sh"], "module load cuda/12.2"),
        (["source /fsx/env.sh", "ml CUDA"], "ml CUDA"),
        (["module add gcc cudnn/8.9"], "module add gcc cudnn/8.9"),
        (["spack load cuda@12.2"], "spack load cuda@12.2"),
        (["module load python/3.10", "export CUDA_HOME=/opt"], None),
        (["echo cuda"], None),
        ([], None),
    ],
)
def test_the_setup_line_that_loads_cuda(setup, found):
    assert cuda.cuda_module(setup) == found


def test_a_gpu_is_visible_by_nvidia_smi_or_the_drivers_files(tmp_path):
    none = lambda name: None  # noqa: E731
    assert not cuda.gpu_visible(tmp_path, none)
    assert cuda.gpu_visible(tmp_path, lambda name: "/usr/bin/nvidia-smi" if name == "nvidia-smi" else None)
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "nvidia0").touch()
    assert cuda.gpu_visible(tmp_path, none)
    (tmp_path / "dev" / "nvidia0").unlink()
    (tmp_path / "proc" / "driver" / "nvidia").mkdir(parents=True)
    assert cuda.gpu_visible(tmp_path, none)
