# Our own reproduction of tensorflow/docs site/en/tutorials/distribute/multi_worker_with_keras.ipynb
# (commit a68c452e3da63207a8648d704b9c2d4e901fd9b0): the mnist_setup.py its %%writefile cell writes.
# One change, for offline tests: the tutorial downloads MNIST with tf.keras.datasets.mnist.load_data()
# (checked against a hash, so no cache can stand in); this reads the same arrays from $MNIST_NPZ.
import os

import numpy as np
import tensorflow as tf


def mnist_dataset(batch_size):
    with np.load(os.environ["MNIST_NPZ"]) as data:
        x_train, y_train = data["x_train"], data["y_train"]
    x_train = x_train / np.float32(255)
    y_train = y_train.astype(np.int64)
    return tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(60000).repeat().batch(batch_size)


def build_and_compile_cnn_model():
    model = tf.keras.Sequential([
        tf.keras.layers.InputLayer(input_shape=(28, 28)),
        tf.keras.layers.Reshape(target_shape=(28, 28, 1)),
        tf.keras.layers.Conv2D(8, 3, activation="relu"),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(32, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    model.compile(
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        optimizer=tf.keras.optimizers.SGD(learning_rate=0.001),
        metrics=["accuracy"],
    )
    return model
