"""What ``--data`` names, decided before anything is read. No TensorFlow here.

- ``digits``: scikit-learn's 1,797 handwritten digits (8x8), shipped with the
  library, so it trains with no network. The default.
- ``mnist``: downloaded through Keras; an error, not a fallback, offline.
- ``synthetic``: random images and labels (benchmarks; accuracy stays at chance).
- a data channel's name (``train``, ``validation``, …): the folder the platform
  hands over as ``SM_CHANNEL_<NAME>`` (SageMaker's input channels, and
  cloudtrain's ``data:`` key on every backend); a channel wins over a built-in
  dataset of the same name;
- a path (local, ``gs://``, ``s3://``) to an ``.npz`` file, to TFRecord files
  (a file, a glob, or a directory holding ``*.tfrecord*``), or to a directory
  holding one of those (a channel's folder).

The dataset actually trained on is always named in the plan; one is never
swapped for another.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from trainer.errors import TrainerError

BUILTIN = ("digits", "mnist", "synthetic")
_NAME = re.compile(r"^[A-Za-z0-9_]+$")
TFRECORD_SUFFIXES = (".tfrecord", ".tfrecords", ".tfrec", ".tfrecord.gz")


@dataclass(frozen=True)
class DataSpec:
    kind: str  # "digits", "mnist", "synthetic", "npz", "tfrecord" or "directory" (looked into when loading)
    location: str | None = None
    origin: str = "--data"


def is_tfrecord(path: str) -> bool:
    return path.lower().endswith(TFRECORD_SUFFIXES)


def channel_path(value: str | None, channels: Mapping[str, str]) -> tuple[str, str] | None:
    """``train`` with ``SM_CHANNEL_TRAIN`` set → (its folder, ``"SM_CHANNEL_TRAIN"``)."""
    if not value or not _NAME.match(value.strip()):
        return None
    name = value.strip().upper()
    return (channels[name], f"SM_CHANNEL_{name}") if name in channels else None


def parse_data_spec(
    value: str | None,
    platform_data: str | None = None,
    platform_var: str = "",
    channels: Mapping[str, str] | None = None,
) -> DataSpec:
    """``value`` is ``--data``; without it the platform's channel, then ``digits``.
    ``channels``: name (upper case) → folder, from ``SM_CHANNEL_<NAME>``."""
    origin = "--data"
    found = channel_path(value, channels or {})
    if found:
        value, origin = found[0], f"--data {value.strip()} ({found[1]})"
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
        known = ", ".join(sorted(n.lower() for n in channels or {})) or "none"
        raise TrainerError(
            f"--data {text!r} is neither a dataset name ({', '.join(BUILTIN)}), nor a data channel "
            f"(channels here: {known}), nor a path; paths contain '/' (write ./name for a local directory)"
        )
    return DataSpec("directory", text, origin)
