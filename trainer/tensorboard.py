"""TensorBoard scalars written with TensorFlow alone.

TF 2.21 no longer installs the ``tensorboard`` package, and ``tf.summary.scalar``
lives there. ``tf.summary.write`` with the scalars plugin's metadata produces
the very same event records, on every TF >= 2.16, with or without it.
Only the chief writes; other workers get a no-op writer.
"""

from __future__ import annotations

from collections.abc import Mapping

import tensorflow as tf
from tensorflow.core.framework import summary_pb2

_SCALAR = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))


def writer(log_dir: str, is_chief: bool):
    return tf.summary.create_file_writer(log_dir) if is_chief else tf.summary.create_noop_writer()


def write_scalars(summary_writer, step: int, values: Mapping[str, float | None]) -> None:
    with summary_writer.as_default(step=step):
        for name, value in values.items():
            if value is not None:
                tf.summary.write(name, tf.constant(float(value), tf.float32), metadata=_SCALAR)
    summary_writer.flush()
