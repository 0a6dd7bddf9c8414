"""Small helpers over ``tf.io.gfile`` so every path may be local, gs:// or s3://.

TensorFlow reads gs:// itself; since TF 2.6 s3:// needs the ``tensorflow-io``
plugin, which SageMaker's TF images install. Elsewhere we say so instead of
failing deep inside a read.
"""

from __future__ import annotations

import shutil
import tempfile

from trainer.errors import TrainerError

_checked: set[str] = set()


def ensure_filesystem(path: str) -> None:
    scheme = path.split("://", 1)[0] if "://" in path else "file"
    if scheme in _checked or scheme in ("file", "gs"):
        return
    if scheme == "s3":
        try:
            import tensorflow_io  # noqa: F401  (registers the s3:// filesystem)
        except ImportError:
            import tensorflow as tf

            try:
                tf.io.gfile.exists(path)
            except tf.errors.UnimplementedError:
                raise TrainerError(
                    f"{path}: this TensorFlow cannot open s3:// paths; give the data as a channel "
                    "(cloudtrain config: data: {train: s3://…}; then --data train), or install "
                    "tensorflow-io matching the TF version"
                ) from None
    _checked.add(scheme)


def makedirs(path: str) -> None:
    import tensorflow as tf

    ensure_filesystem(path)
    tf.io.gfile.makedirs(path)


def write_text(path: str, text: str) -> None:
    import tensorflow as tf

    ensure_filesystem(path)
    with tf.io.gfile.GFile(path, "w") as f:
        f.write(text)


def read_bytes(path: str) -> bytes:
    import tensorflow as tf

    ensure_filesystem(path)
    with tf.io.gfile.GFile(path, "rb") as f:
        return f.read()


def upload(local_path: str, dest: str) -> None:
    import tensorflow as tf

    ensure_filesystem(dest)
    tf.io.gfile.copy(local_path, dest, overwrite=True)


def local_tempdir(prefix: str) -> str:
    return tempfile.mkdtemp(prefix=prefix)


def remove_local(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
