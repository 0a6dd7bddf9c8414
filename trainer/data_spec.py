"""What ``--data`` names, decided before anything is read. No TensorFlow here.

- ``digits``: scikit-learn's 1,797 handwritten digits (8x8), shipped with the
  library, so it trains with no network. The default.
- ``mnist``: downloaded through Keras; an error, not a fallback, offline.
- ``synthetic``: random images and labels (benchmarks; accuracy stays at chance).
- a path (local, ``gs://``, ``s3://``) to an ``.npz`` file, to TFRecord files
  (a file, a glob, or a directory holding ``*.tfrecord*``), or to a directory
  holding one of those (a SageMaker channel).

The dataset actually trained on is always named in the plan; one is never
swapped for another.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainer.errors import TrainerError

BUILTIN = ("digits", "mnist", "synthetic")
TFRECORD_SUFFIXES = (".tfrecord", ".tfrecords", ".tfrec", ".tfrecord.gz")


@dataclass(frozen=True)
class DataSpec:
    kind: str  # "digits", "mnist", "synthetic", "npz", "tfrecord" or "directory" (looked into when loading)
    location: str | None = None
    origin: str = "--data"


def is_tfrecord(path: str) -> bool:
    return path.lower().endswith(TFRECORD_SUFFIXES)


def parse_data_spec(value: str | None, platform_data: str | None = None, platform_var: str = "") -> DataSpec:
    """``value`` is ``--data``; without it the platform's channel, then ``digits``."""
    origin = "--data"
    if not value:
        if platform_data:
            value, origin = platform_data, platform_var or "platform data channel"
        else:
            return DataSpec("digits", None, "default")
    text = value.strip()
    if text.lower() in BUILTIN:
        return DataSpec(text.lower(), None, origin)
    if "://" in text and not text.startswith(("gs://", "s3://", "file://")):
        raise TrainerError(f"--data {text!r}: only local paths, gs:// and s3:// are supported")
    if text.lower().endswith(".npz"):
        return DataSpec("npz", text, origin)
    if is_tfrecord(text) or any(ch in text for ch in "*?["):
        return DataSpec("tfrecord", text, origin)
    if "/" not in text and "." not in text:
        raise TrainerError(
            f"--data {text!r} is neither a dataset name ({', '.join(BUILTIN)}) nor a path; "
            "paths contain '/' (write ./name for a local directory)"
        )
    return DataSpec("directory", text, origin)
