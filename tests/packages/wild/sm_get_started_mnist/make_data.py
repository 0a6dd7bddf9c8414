"""Tiny MNIST-format files (idx, gzip'd): python make_data.py DIR writes the four files the script reads."""

import gzip
import os
import struct
import sys

import numpy as np

rand = np.random.default_rng(0)
os.makedirs(sys.argv[1], exist_ok=True)
for prefix, count in (("train", 256), ("t10k", 64)):
    labels = rand.integers(0, 10, count).astype(np.uint8)
    images = np.zeros((count, 28, 28), np.uint8)
    for i, label in enumerate(labels):  # a bright bar whose row is the label: learnable in one epoch
        images[i, 2 + 2 * label : 4 + 2 * label, 4:24] = 255
    with gzip.open(os.path.join(sys.argv[1], f"{prefix}-images-idx3-ubyte.gz"), "wb") as f:
        f.write(struct.pack(">IIII", 2051, count, 28, 28) + images.tobytes())
    with gzip.open(os.path.join(sys.argv[1], f"{prefix}-labels-idx1-ubyte.gz"), "wb") as f:
        f.write(struct.pack(">II", 2049, count) + labels.tobytes())
