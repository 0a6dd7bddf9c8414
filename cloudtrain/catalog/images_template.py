"""Prebuilt TensorFlow training images whose URI is one template over a version table (``uri_rules: template``; Vertex
AI's), the region picking the multi-region."""

from __future__ import annotations

from cloudtrain.catalog.records import CatalogError
from cloudtrain.catalog.suggest import nearest_versions, version_key
from cloudtrain.catalog.table import CloudTable


def tensorflow_versions(table: CloudTable) -> tuple[str, ...]:
    return tuple(sorted(table.tensorflow_images["versions"], key=version_key))


def training_image(table: CloudTable, region: str, tensorflow: str, gpu: bool, py_version: str | None) -> str:
    images = table.tensorflow_images
    major_minor = ".".join(tensorflow.strip().split(".")[:2])  # the images carry the latest patch
    row = images["versions"].get(major_minor)
    available = tensorflow_versions(table)
    if row is None:
        raise CatalogError(
            f"{table.title} has no prebuilt TensorFlow {tensorflow} training image; available: {', '.join(available)}",
            nearest_versions(tensorflow, available),
            field="tensorflow",
        )
    if py_version and py_version != row["python"] and not (py_version == "py3" and row["python"].startswith("py3")):
        raise CatalogError(
            f"the {table.title} TensorFlow {major_minor} image has Python {row['python']}, not {py_version}",
            [row["python"]],
            field="tensorflow",
        )
    major, minor = major_minor.split(".")
    template: str = images["template"]
    return template.format(
        image_prefix=table.regions[region]["image_prefix"],
        processor=images["processors"]["gpu" if gpu else "cpu"],
        major=major,
        minor=minor,
        python=row["python"],
    )


def python_tags(table: CloudTable, tensorflow: str) -> tuple[str, ...]:
    row = table.tensorflow_images["versions"].get(".".join(tensorflow.strip().split(".")[:2]))
    return (row["python"],) if row else ()
