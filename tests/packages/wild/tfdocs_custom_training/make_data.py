"""A tiny Fashion-MNIST in Keras's download cache: python make_data.py KERAS_HOME (datasets/fashion-mnist/*.gz)."""

import gzip
import os
import struct
import sys

import numpy as np

rand = np.random.default_rng(2)
folder = os.path.join(sys.argv[1], "datasets", "fashion-mnist")
os.makedirs(folder, exist_ok=True)
for prefix, count in (("train", 256), ("t10k", 64)):
    labels = rand.integers(0, 10, count).astype(np.uint8)
    images = (rand.random((count, 28, 28)) * 40).astype(np.uint8)
    for i, label in enumerate(labels):
        images[i, 2 + 2 * label : 4 + 2 * label, :] = 250
    with gzip.open(os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz"), "wb") as f:
        f.write(struct.pack(">IIII", 2051, count, 28, 28) + images.tobytes())
    with gzip.open(os.path.join(folder, f"{prefix}-labels-idx1-ubyte.gz"), "wb") as f:
        f.write(struct.pack(">II", 2049, count) + labels.tobytes())
