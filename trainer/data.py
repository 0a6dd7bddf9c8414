"""Load a dataset and build the ``tf.data`` input pipelines.

Every source becomes an unbatched dataset of ``(image float32 HxWxC, label
int32)`` plus its size and shape; the pipelines then

- train: cache -> shuffle (seeded, reshuffled each epoch) -> repeat -> batch by
  the *global* batch (full batches only) -> prefetch(AUTOTUNE);
- eval: cache -> batch by the global batch -> prefetch(AUTOTUNE);

sharded across the workers of a MultiWorkerMirroredStrategy: training data
read from at least as many TFRecord files as there are workers is sharded by
FILE (each worker reads only its files); anything else (one file, in-memory
arrays from ``.npz``) by DATA, so each worker keeps its share of every global
batch. The shuffle seed is the same on every worker, which keeps DATA shares
disjoint. Evaluation is sharded by DATA, so every worker sees the same number
of batches. A channel SageMaker already shards by host (``ShardedByS3Key``) is
not sharded again. Files are read with ``tf.io.gfile`` / ``tf.data`` only
(local paths, ``gs://``, channel folders): no tensorflow-io.

TFRecord files hold ``tf.train.Example`` records with ``image`` (raw uint8
bytes), ``label`` (int64) and ``shape`` (int64 [h, w, c]); ``write_tfrecord``
writes that format.
"""

from __future__ import annotations

import io
import posixpath
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from trainer import storage
from trainer.data_spec import DataSpec, is_tfrecord
from trainer.errors import TrainerError

AUTOTUNE = tf.data.AUTOTUNE
_VAL_WORDS = ("val", "valid", "validation", "eval", "test")


@dataclass
class LoadedData:
    name: str
    source: str
    train: tf.data.Dataset
    val: tf.data.Dataset | None
    train_examples: int
    val_examples: int
    input_shape: tuple[int, ...]
    num_classes: int
    train_files: tuple[str, ...] = ()  # TFRecord files the training set is read from (sharding by FILE)

    def describe(self) -> dict:
        return {
            "name": self.name,
            "source": self.source,
            "train_examples": self.train_examples,
            "val_examples": self.val_examples,
            "input_shape": list(self.input_shape),
            "num_classes": self.num_classes,
            **({"train_files": len(self.train_files)} if self.train_files else {}),
        }


def _images(x: np.ndarray) -> np.ndarray:
    if x.ndim == 3:  # (N, H, W) grayscale
        x = x[..., None]
    if x.ndim != 4:
        raise TrainerError(f"images must be (N, H, W) or (N, H, W, C), got shape {x.shape}")
    return x


def _scale_for(x: np.ndarray) -> float:
    return 1.0 / 255.0 if x.dtype == np.uint8 else 1.0


def _from_arrays(x: np.ndarray, y: np.ndarray, scale: float) -> tf.data.Dataset:
    ds = tf.data.Dataset.from_tensor_slices((x, y.astype(np.int32)))
    return ds.map(lambda a, b: (tf.cast(a, tf.float32) * scale, b), num_parallel_calls=AUTOTUNE)


def _split(x: np.ndarray, y: np.ndarray, val_split: float, seed: int):
    if not 0.0 <= val_split < 1.0:
        raise TrainerError(f"--val-split must be in [0, 1), got {val_split}")
    order = np.random.default_rng(seed).permutation(len(x))
    n_val = int(round(len(x) * val_split))
    val, train = order[:n_val], order[n_val:]
    return (x[train], y[train]), (x[val], y[val])


def _arrays_data(name, source, train, val, scale) -> LoadedData:
    (xt, yt), (xv, yv) = train, val
    xt = _images(xt)
    xv = _images(xv) if len(xv) else xv
    labels = np.concatenate([yt, yv]) if len(yv) else yt
    return LoadedData(
        name=name,
        source=source,
        train=_from_arrays(xt, yt, scale),
        val=_from_arrays(xv, yv, scale) if len(yv) else None,
        train_examples=len(xt),
        val_examples=len(yv),
        input_shape=tuple(int(d) for d in xt.shape[1:]),
        num_classes=int(labels.max()) + 1,
    )


def load_digits(val_split: float, seed: int) -> LoadedData:
    from sklearn.datasets import load_digits as sk_load_digits

    bunch = sk_load_digits()
    x = (bunch.images / 16.0).astype(np.float32)  # pixel values are 0..16
    train, val = _split(x, bunch.target, val_split, seed)
    return _arrays_data("digits", "scikit-learn load_digits (8x8, offline)", train, val, 1.0)


def load_mnist() -> LoadedData:
    import keras

    try:
        (xt, yt), (xv, yv) = keras.datasets.mnist.load_data()
    except Exception as exc:  # network errors surface as many types
        raise TrainerError(
            f"could not download MNIST through Keras ({type(exc).__name__}: {exc}); this machine may be "
            "offline: use --data digits (no download) or --data PATH to an mnist.npz"
        ) from None
    return _arrays_data("mnist", "keras.datasets.mnist", (xt, yt), (xv, yv), 1.0 / 255.0)


def _read_npz(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(io.BytesIO(storage.read_bytes(path))) as f:
            return {k: f[k] for k in f.files}
    except tf.errors.NotFoundError:
        raise TrainerError(f"{path}: no such file") from None


def _xy(arrays: dict[str, np.ndarray], path: str) -> tuple[np.ndarray, np.ndarray]:
    for kx, ky in (("x_train", "y_train"), ("x", "y")):
        if kx in arrays and ky in arrays:
            return arrays[kx], arrays[ky]
    raise TrainerError(f"{path} has arrays {sorted(arrays)}; expected x_train/y_train or x/y")


def _npz_arrays(paths: list[str]) -> tuple[np.ndarray, np.ndarray, tuple | None, str | None]:
    """(x, y, held-out (x, y) or None, its key) of one or more ``.npz`` files, concatenated in order."""
    xs, ys, held, key = [], [], [], None
    for path in paths:
        arrays = _read_npz(path)
        x, y = _xy(arrays, path)
        xs.append(x)
        ys.append(y)
        found = next((k for k in ("val", "test") if f"x_{k}" in arrays and f"y_{k}" in arrays), None)
        if found:
            held.append((arrays[f"x_{found}"], arrays[f"y_{found}"]))
            key = key or found
    if len({_images(x).shape[1:] for x in xs}) > 1:
        raise TrainerError(f"{', '.join(paths)}: the files hold images of different shapes")
    x, y = (xs[0], ys[0]) if len(xs) == 1 else (np.concatenate(xs), np.concatenate(ys))
    if held and len(held) == len(paths):
        return x, y, (np.concatenate([h[0] for h in held]), np.concatenate([h[1] for h in held])), key
    return x, y, None, None


def load_npz(path: str | list[str], val_path: str | list[str] | None, val_split: float, seed: int) -> LoadedData:
    """Keys ``x_train, y_train[, x_test|x_val, y_test|y_val]`` (Keras's mnist.npz) or ``x, y``; several
    files (a channel's shards) are concatenated. Validation from ``val_path``, else the files' test
    arrays, else ``val_split`` of the training arrays."""
    paths = [path] if isinstance(path, str) else list(path)
    shown = posixpath.basename(paths[0]) + (f" (+{len(paths) - 1} files)" if len(paths) > 1 else "")
    x, y, held, key = _npz_arrays(paths)
    if val_path:
        val_paths = [val_path] if isinstance(val_path, str) else list(val_path)
        vx, vy, _, _ = _npz_arrays(val_paths)
        val, val_source = (vx, vy), ", ".join(val_paths)
    elif held is not None:
        val, val_source = held, f"{shown}:x_{key}"
    else:
        (x, y), val = _split(x, y, val_split, seed)
        val_source = f"{val_split:.0%} of {shown}"
    if len(val[0]) and _images(val[0]).shape[1:] != _images(x).shape[1:]:
        raise TrainerError(f"validation images {val[0].shape[1:]} differ from training images {x.shape[1:]}")
    return _arrays_data(shown, f"{', '.join(paths)}; validation: {val_source}", (x, y), val, _scale_for(x))


# --- TFRecord -------------------------------------------------------------------

_FEATURES = {
    "image": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
    "shape": tf.io.FixedLenFeature([3], tf.int64),
}


def write_tfrecord(path: str, images: np.ndarray, labels: np.ndarray) -> None:
    images = _images(np.asarray(images))
    if images.dtype != np.uint8:
        raise TrainerError(f"write_tfrecord stores uint8 pixels, got {images.dtype}")
    storage.ensure_filesystem(path)
    with tf.io.TFRecordWriter(path) as writer:
        for image, label in zip(images, labels, strict=True):
            feature = {
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
                "shape": tf.train.Feature(int64_list=tf.train.Int64List(value=list(image.shape))),
            }
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())


def _tfrecord_files(location: str) -> list[str]:
    storage.ensure_filesystem(location)
    if any(ch in location for ch in "*?["):
        files = tf.io.gfile.glob(location)
    elif is_tfrecord(location):
        files = [location] if tf.io.gfile.exists(location) else []
    else:
        files = [f for f in tf.io.gfile.glob(posixpath.join(location, "*")) if is_tfrecord(f)]
    if not files:
        raise TrainerError(f"no TFRecord files at {location}")
    return sorted(files)


def _tfrecord_dataset(files: list[str]) -> tuple[tf.data.Dataset, tuple[int, ...], int, int]:
    compression = "GZIP" if files[0].endswith(".gz") else None
    raw = tf.data.TFRecordDataset(files, compression_type=compression, num_parallel_reads=AUTOTUNE)
    first = next(iter(raw.take(1)), None)
    if first is None:
        raise TrainerError(f"TFRecord files {files[:3]} hold no records")
    shape = tuple(int(d) for d in tf.io.parse_single_example(first, _FEATURES)["shape"].numpy())
    # One pass over the labels: the plan states the dataset size, and the model needs the class count.
    labels = raw.map(lambda r: tf.io.parse_single_example(r, {"label": _FEATURES["label"]})["label"])
    start = (tf.constant(0, tf.int64), tf.constant(-1, tf.int64))
    count, top = labels.reduce(start, lambda s, v: (s[0] + 1, tf.maximum(s[1], v)))

    return _read_records(files, shape), shape, int(count), int(top) + 1


def _read_records(files: list[str], shape: tuple[int, ...]) -> tf.data.Dataset:
    """Decoded ``(image, label)`` records of ``files``."""
    compression = "GZIP" if files[0].endswith(".gz") else None
    raw = tf.data.TFRecordDataset(files, compression_type=compression, num_parallel_reads=AUTOTUNE)

    def decode(record):
        ex = tf.io.parse_single_example(record, _FEATURES)
        image = tf.reshape(tf.io.decode_raw(ex["image"], tf.uint8), shape)
        return tf.cast(image, tf.float32) / 255.0, tf.cast(ex["label"], tf.int32)

    return raw.map(decode, num_parallel_calls=AUTOTUNE)


def load_tfrecord(train_files: list[str], val_files: list[str], source: str) -> LoadedData:
    train, shape, n_train, classes = _tfrecord_dataset(train_files)
    val, n_val = None, 0
    if val_files:
        val, val_shape, n_val, val_classes = _tfrecord_dataset(val_files)
        if val_shape != shape:
            raise TrainerError(f"validation records are {val_shape}, training records {shape}")
        classes = max(classes, val_classes)
    return LoadedData(
        posixpath.basename(train_files[0]), source, train, val, n_train, n_val, shape, classes, tuple(train_files)
    )


def _split_by_name(files: list[str]) -> tuple[list[str], list[str]]:
    def is_val(f: str) -> bool:
        words = posixpath.basename(f).lower().replace("-", "_").replace(".", "_").split("_")
        return any(w in _VAL_WORDS for w in words)

    return [f for f in files if not is_val(f)], [f for f in files if is_val(f)]


def load_directory(location: str, val_location: str | None, val_split: float, seed: int) -> LoadedData:
    storage.ensure_filesystem(location)
    if not tf.io.gfile.isdir(location):
        raise TrainerError(f"--data {location}: not a directory, .npz file or TFRecord file")
    names = sorted(tf.io.gfile.listdir(location))
    npz = [n for n in names if n.lower().endswith(".npz")]
    records = [posixpath.join(location, n) for n in names if is_tfrecord(n)]
    if npz and not records:
        train, val = _split_by_name([posixpath.join(location, n) for n in npz])
        if not train:  # one file named like data_test.npz: it is the data
            train, val = val, []
        return load_npz(train, val_location or val or None, val_split, seed)
    if records:
        train, val = _split_by_name(records)
        if val_location:
            val = _tfrecord_files(val_location)
        if not train:
            raise TrainerError(f"{location}: every TFRecord file looks like validation data ({names[:5]})")
        return load_tfrecord(train, val, f"{location} ({len(train)} train / {len(val)} validation files)")
    raise TrainerError(f"{location} holds no .npz or .tfrecord files (found: {names[:10]})")


def synthetic(input_shape, num_classes: int, examples: int, seed: int) -> LoadedData:
    def make(i):
        s = tf.stack([tf.cast(seed, tf.int64), i])
        image = tf.random.stateless_uniform(input_shape, seed=s)
        label = tf.random.stateless_uniform([], seed=s + 1, maxval=num_classes, dtype=tf.int32)
        return image, label

    ds = tf.data.Dataset.range(examples).map(make, num_parallel_calls=AUTOTUNE)
    val_n = max(examples // 8, 1)
    val = tf.data.Dataset.range(examples, examples + val_n).map(make, num_parallel_calls=AUTOTUNE)
    return LoadedData(
        "synthetic",
        "random images and labels (accuracy stays at chance)",
        ds,
        val,
        examples,
        val_n,
        tuple(input_shape),
        num_classes,
    )


def load(
    spec: DataSpec,
    val_location: str | None,
    *,
    val_split: float,
    seed: int,
    synthetic_shape=(28, 28, 1),
    synthetic_classes: int = 10,
    synthetic_examples: int = 2048,
) -> LoadedData:
    if spec.kind == "digits":
        return load_digits(val_split, seed)
    if spec.kind == "mnist":
        return load_mnist()
    if spec.kind == "synthetic":
        return synthetic(synthetic_shape, synthetic_classes, synthetic_examples, seed)
    location = spec.location
    assert location is not None, f"{spec.kind} data comes with a location"  # parse_data_spec gives files one
    if spec.kind == "npz":
        return load_npz(location, val_location, val_split, seed)
    if spec.kind == "tfrecord":
        files = _tfrecord_files(location)
        val = _tfrecord_files(val_location) if val_location else []
        return load_tfrecord(files, val, location)
    return load_directory(location, val_location, val_split, seed)


# --- pipelines --------------------------------------------------------------------


def shard_policy(data: LoadedData, num_workers: int, presharded: bool = False) -> str:
    """``off`` for a channel the platform already shards by host (SageMaker's ``ShardedByS3Key``);
    ``file`` when every worker can have TFRecord files of its own; else ``data``."""
    if presharded and num_workers > 1:
        return "off"
    return "file" if num_workers > 1 and len(data.train_files) >= num_workers else "data"


def _sharded(ds: tf.data.Dataset, policy: str = "data") -> tf.data.Dataset:
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = getattr(tf.data.experimental.AutoShardPolicy, policy.upper())
    return ds.with_options(options)


_MAX_CLASSES = 1 << 16


def pool_shards(strategy, data: LoadedData) -> None:
    """For a channel the platform shards by host: every worker holds only its share, so count the
    examples of all shares and take the largest class count (the model must be the same everywhere)."""
    if data.num_classes > _MAX_CLASSES:
        raise TrainerError(f"{data.num_classes} classes: more than {_MAX_CLASSES} cannot be agreed across workers")
    local = np.zeros(_MAX_CLASSES + 2, np.float32)
    local[0], local[1] = data.train_examples, data.val_examples
    local[1 + data.num_classes] = 1.0  # one-hot at the class count: the highest set index is the maximum
    summed = strategy.reduce("SUM", strategy.run(lambda: tf.constant(local)), axis=None).numpy()
    data.train_examples, data.val_examples = int(summed[0]), int(summed[1])
    data.num_classes = int(np.flatnonzero(summed[2:])[-1]) + 1


def train_pipeline(
    data: LoadedData,
    global_batch: int,
    seed: int,
    *,
    cache: bool = True,
    shuffle_buffer: int = 10_000,
    num_workers: int = 1,
    presharded: bool = False,
    worker: int | None = None,
    skip_batches: int = 0,
) -> tf.data.Dataset:
    """Global batches, sharded across ``num_workers`` (see ``shard_policy``).

    With ``worker``, only that worker's share, for a plain per-worker iterator that can be
    checkpointed: by FILE, its own TFRecord files, and OFF (already sharded by the platform), its
    own data, each batched by its share of the global batch; by DATA, its slice of every global
    batch. Without, the whole pipeline for ``experimental_distribute_dataset`` to shard (TPUs).
    ``skip_batches``: resume by position where the iterator cannot be checkpointed."""
    policy = shard_policy(data, num_workers, presharded)
    source, batch, examples = data.train, global_batch, data.train_examples
    if worker is not None and policy in ("file", "off"):
        if policy == "file":
            source = _read_records(list(data.train_files[worker::num_workers]), data.input_shape)
        batch, examples = global_batch // num_workers, max(data.train_examples // num_workers, 1)
    ds = source.cache() if cache else source
    ds = ds.shuffle(min(shuffle_buffer, examples), seed=seed, reshuffle_each_iteration=True)
    ds = ds.repeat().batch(batch, drop_remainder=True)
    if worker is not None and policy == "data" and num_workers > 1:
        share = global_batch // num_workers
        ds = ds.map(lambda x, y: (x[worker * share : (worker + 1) * share], y[worker * share : (worker + 1) * share]))
    if skip_batches:
        ds = ds.skip(skip_batches)
    return _sharded(ds.prefetch(AUTOTUNE), policy)


def eval_pipeline(
    data: LoadedData, global_batch: int, *, cache: bool = True, presharded: bool = False, static_shapes: bool = False
) -> tf.data.Dataset | None:
    """Validation batches; ``static_shapes`` (TPUs): full batches only, so XLA compiles one shape
    (the last ``examples % global_batch`` examples are not evaluated)."""
    if data.val is None:
        return None
    ds = data.val.cache() if cache else data.val
    ds = ds.batch(global_batch, drop_remainder=static_shapes)
    return _sharded(ds.prefetch(AUTOTUNE), "off" if presharded else "data")


def benchmark_input(strategy, per_replica_batch: int, input_shape, num_classes: int):
    """One fixed random batch per replica, repeated: measures the model, not the input."""

    def per_replica(_context):
        images = tf.random.uniform([per_replica_batch, *input_shape])
        labels = tf.random.uniform([per_replica_batch], maxval=num_classes, dtype=tf.int32)
        return tf.data.Dataset.from_tensors((images, labels)).cache().repeat()

    return strategy.distribute_datasets_from_function(per_replica)
