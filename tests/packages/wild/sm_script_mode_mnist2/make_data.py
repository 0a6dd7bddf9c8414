"""Tiny MNIST arrays as the sample's S3 prefix holds them: python make_data.py DIR (train_/eval_ data, labels)."""

import os
import sys

import numpy as np

rand = np.random.default_rng(5)
os.makedirs(sys.argv[1], exist_ok=True)
for prefix, count in (("train", 256), ("eval", 64)):
    labels = rand.integers(0, 10, count).astype(np.int32)
    data = np.zeros((count, 28, 28), np.float32)
    for i, label in enumerate(labels):
        data[i, 2 + 2 * label : 4 + 2 * label, 2:26] = 1.0
    np.save(os.path.join(sys.argv[1], f"{prefix}_data.npy"), data)
    np.save(os.path.join(sys.argv[1], f"{prefix}_labels.npy"), labels)
