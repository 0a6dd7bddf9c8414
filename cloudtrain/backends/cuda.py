"""Which TensorFlow build an environment on a GPU host gets: the one that brings its own CUDA.

The plain ``tensorflow`` wheel finds a GPU only through the system's CUDA and cuDNN; without them (or with another
version) the trainer runs on the CPU without a word. Since TF 2.14 ``tensorflow[and-cuda]`` brings the NVIDIA
wheels, so a host needs only its driver. The rule, shared by ``--local`` and Slurm: no GPU, the requirements as
they are; GPUs and a host that provides CUDA (``module load cuda…`` in ``slurm.setup``), as they are; other GPUs,
``tensorflow[and-cuda]==X.*`` (before 2.14 there is none, and a line says the host must provide CUDA). The
requirements are the image layer's content, so GPU and CPU layers are two cached environments. Pure functions,
apart from :func:`gpu_visible`."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: The first TensorFlow with the ``and-cuda`` extra.
FIRST_AND_CUDA = (2, 14)
EXTRA = "and-cuda"
#: What shows an NVIDIA GPU to this machine when ``nvidia-smi`` is not on PATH (a container, a bare driver).
GPU_PATHS = ("proc/driver/nvidia", "dev/nvidia0")
#: A setup line that loads the cluster's CUDA: ``module load cuda/12.2``, ``ml CUDA``, ``spack load cuda@12.2``, …
_CUDA_MODULE = re.compile(r"^\s*(?:module\s+(?:load|add)|ml|spack\s+load)\s+(?:.*\s)?(cuda|cudnn)\b[^\s;&|]*", re.I)
_TENSORFLOW = re.compile(r"^tensorflow(?:\[[^\]]*\])?(?P<pin>(?:==|~=|>=).*)?$")


@dataclass(frozen=True)
class GpuBuild:
    """The image layer's requirements for a host, and the one line the plan shows about them."""

    packages: tuple[str, ...]
    line: str
    with_cuda: bool  # True: the requirements bring CUDA's libraries (tensorflow[and-cuda])


def gpu_visible(root: Path = Path("/"), which: Callable[[str], str | None] = shutil.which) -> bool:
    """Whether this machine shows an NVIDIA GPU: ``nvidia-smi`` on PATH, ``/proc/driver/nvidia`` or ``/dev/nvidia0``."""
    return which("nvidia-smi") is not None or any((root / path).exists() for path in GPU_PATHS)


def cuda_module(setup: Sequence[str]) -> str | None:
    """The ``setup`` line that loads CUDA from the cluster's modules, if one does."""
    return next((line.strip() for line in setup if _CUDA_MODULE.search(line)), None)


def gpu_build(packages: Sequence[str], *, gpus: str | None, cuda_from: str | None = None) -> GpuBuild:
    """The requirements of an image layer that runs on ``gpus`` (why the host has GPUs: "4 GPUs per node
    requested", "a GPU is visible here"; None = no GPU), with CUDA from ``cuda_from`` (the setup line
    that loads it) or else from the wheels."""
    packages = tuple(packages)
    index = next((i for i, p in enumerate(packages) if _TENSORFLOW.match(p.replace(" ", ""))), None)
    if index is None:
        return GpuBuild(packages, "no TensorFlow in the environment", False)
    tensorflow = packages[index]
    if not gpus:
        return GpuBuild(packages, f"{tensorflow} (CPU only: no GPU requested or seen)", False)
    if cuda_from:
        return GpuBuild(packages, f"{tensorflow} for {gpus}, CUDA from the cluster ({cuda_from!r})", False)
    pin = _TENSORFLOW.match(tensorflow.replace(" ", ""))["pin"] or ""  # type: ignore[index]
    version = tuple(int(x) for x in re.findall(r"\d+", pin)[:2]) or FIRST_AND_CUDA
    if version < FIRST_AND_CUDA:
        return GpuBuild(
            packages,
            f"{tensorflow} for {gpus}: TensorFlow {'.'.join(map(str, version))} has no build with its own CUDA "
            "(tensorflow[and-cuda] starts at 2.14), so the host must provide CUDA and cuDNN",
            False,
        )
    with_cuda = f"tensorflow[{EXTRA}]{pin}"
    built = (*packages[:index], with_cuda, *packages[index + 1 :])
    return GpuBuild(built, f"{with_cuda} for {gpus}: TensorFlow with its own CUDA libraries", True)
