"""TensorFlow training images from the table an installed SDK ships (``uri_rules: sdk_table``; SageMaker's), opened as
a plain file (importing ``sagemaker.core`` costs seconds) and built as ``sagemaker.core.image_uris.retrieve`` does."""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from typing import Any

from cloudtrain.catalog.records import CatalogError
from cloudtrain.catalog.suggest import nearest_versions, version_key
from cloudtrain.catalog.table import CloudTable


@functools.cache
def _sdk_table(package: str, relative: tuple[str, ...], scope: str, distribution: str) -> dict[str, Any]:
    spec = importlib.util.find_spec(package)
    for root in (spec.submodule_search_locations or []) if spec else []:
        path = Path(root).joinpath(*relative)
        if path.is_file():
            table: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))[scope]
            return table
    raise CatalogError(
        f"{distribution}'s image table {'/'.join(relative)} was not found; reinstall cloudtrain's dependencies",
        field="tensorflow",
    )


def _images(table: CloudTable) -> dict[str, Any]:
    conf = table.tensorflow_images
    return _sdk_table(conf["sdk_package"], tuple(conf["sdk_table"]), conf["scope"], conf["sdk_distribution"])


def _config(images: dict[str, Any], version: str) -> dict[str, Any] | None:
    full = images.get("version_aliases", {}).get(version, version)
    config = images["versions"].get(full)
    return config if config and "repository" in config else None  # older ones are keyed by Python version


def _python_key(tag: str) -> tuple[int, int]:
    """``py310`` → ``(3, 10)``, ``py3`` → ``(3, 0)``."""
    digits = tag.removeprefix("py")
    return (int(digits[:1] or 0), int(digits[1:] or 0)) if digits.isdigit() else (0, 0)


def tensorflow_versions(table: CloudTable) -> tuple[str, ...]:
    """Major.minor versions with a training image, oldest first (``2.13`` stands for ``2.13.0``)."""
    images = _images(table)
    floor = version_key(table.tensorflow_images["min_version"])
    found = [v for v in images.get("version_aliases", {}) if version_key(v) >= floor and _config(images, v)]
    return tuple(sorted(found, key=version_key))


def training_image(table: CloudTable, region: str, tensorflow: str, gpu: bool, py_version: str | None) -> str:
    conf = table.tensorflow_images
    images = _images(table)
    version = tensorflow.strip()
    config = _config(images, version) if version_key(version) >= version_key(conf["min_version"]) else None
    if config is None:
        available = tensorflow_versions(table)
        raise CatalogError(
            f"{table.title} has no TensorFlow {tensorflow} training image; available: {', '.join(available)}",
            nearest_versions(tensorflow, available),
            field="tensorflow",
        )
    pythons = sorted(config.get("py_versions", []), key=_python_key)
    python = py_version or (pythons[-1] if pythons else None)
    if python == "py3" and python not in pythons and any(p.startswith("py3") for p in pythons):
        python = [p for p in pythons if p.startswith("py3")][-1]  # Python 3: the image's
    if pythons and python not in pythons:
        raise CatalogError(
            f"the {table.title} TensorFlow {version} image has Python {', '.join(pythons)}, not {python}",
            pythons[::-1],
            field="tensorflow",
        )
    registry = config["registries"].get(region)
    if registry is None:
        raise CatalogError(
            f"{table.title} has no TensorFlow {version} training image in {region}; "
            f"it has one in {', '.join(sorted(config['registries']))}",
            [
                v
                for v in reversed(tensorflow_versions(table))
                if region in (_config(images, v) or {}).get("registries", {})
            ][:2],
            field="tensorflow",
        )
    processor = "gpu" if gpu else "cpu"
    processors = config.get("processors") or images.get("processors") or [processor]
    if processor not in processors:
        raise CatalogError(f"the {table.title} TensorFlow {version} image has no {processor} build", field="tensorflow")
    container = (config.get("container_version") or {}).get(processor)
    tag_parts = (
        config.get("tag_prefix", version),
        processor if config.get("processor_in_tag", True) else None,
        python,
        container,
    )
    uri: str = conf["uri"]
    return uri.format(
        registry=registry,
        region=region,
        dns_suffix=conf["dns_suffixes"].get(region, conf["dns_suffix"]),
        repository=config["repository"],
        tag="-".join(p for p in tag_parts if p),
    )


def python_tags(table: CloudTable, tensorflow: str) -> tuple[str, ...]:
    config = _config(_images(table), tensorflow.strip())
    return tuple(sorted(config.get("py_versions", []), key=_python_key)) if config else ()
