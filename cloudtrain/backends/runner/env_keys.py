"""Where each layer of a cached environment lives (:mod:`.venv`), named by what decides what it holds:
computed without building anything or starting a process, so a dry run can print the path."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from cloudtrain.backends.runner.image import Image
from cloudtrain.history import cache_dir
from cloudtrain.packaging import BuiltPackage


def cache_root() -> Path:
    """cloudtrain's one cache directory (see :func:`cloudtrain.history.cache_dir`)."""
    return cache_dir()


def env_python(path: Path) -> Path:
    return path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def content_key(*parts: str) -> str:
    """16 hex digits of ``parts``: the name of a cached env."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def image_dir(image: Image, root: Path | None = None) -> Path:
    return (root or cache_root()) / "envs" / f"image-{image.key}"


#: pip's settings that choose where requirements come from: a different index can resolve differently.
INDEX_SETTINGS = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_CONFIG_FILE")


def index_settings(environ: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """The :data:`INDEX_SETTINGS` set in ``environ`` (default: this process's), as (name, value) pairs."""
    environ = os.environ if environ is None else environ
    return tuple((name, environ[name]) for name in INDEX_SETTINGS if environ.get(name))


def requirements_key(requirements: Sequence[str], image: Image, index: Sequence[tuple[str, str]] = ()) -> str:
    """The key of a requirements layer: what decides what it holds, and nothing else.

    The image layer (:attr:`Image.key`), the resolved requirements (order and spacing do not matter) and the index
    settings (:func:`index_settings`); never the package's code, so an edit that keeps its requirements reuses the
    layer, with no network."""
    wanted = sorted({spaceless(r) for r in requirements})
    return content_key("requirements", image.key, *wanted, "index", *(f"{k}={v}" for k, v in index))


def spaceless(requirement: str) -> str:
    """``numpy >= 1.26`` and ``numpy>=1.26`` are one requirement."""
    return "".join(requirement.split())


def deps_dir(key: str, root: Path | None = None) -> Path:
    """The requirements layer of ``key`` (a :func:`requirements_key`)."""
    return (root or cache_root()) / "envs" / f"deps-{key}"


def env_dir(
    package: BuiltPackage, image: Image, root: Path | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """Where the env of ``package`` (a :class:`~cloudtrain.packaging.BuiltPackage`) on ``image`` lives:
    its own thin layer, on the requirements layer its requirements and the index settings decide."""
    deps = requirements_key(requirements_of(package), image, index_settings(environ))
    return (root or cache_root()) / "envs" / f"pkg-{content_key(content_key(package.sha256, deps), image.key)}"


def requirements_of(package: BuiltPackage) -> tuple[str, ...]:
    """The package's resolved requirements (a stand-in that names only the sdist has none)."""
    return tuple(getattr(package, "requirements", ()))
