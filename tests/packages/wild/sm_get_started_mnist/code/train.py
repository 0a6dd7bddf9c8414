# Our own reproduction of aws/amazon-sagemaker-examples frameworks/tensorflow/code/train.py
# (commit 2bc9f6dbda8367d88658b0e1556c7bc66f01dd50) and its notebook's estimator (launch.py,
# get_started_mnist_train.ipynb at 05b2d09); written for cloudtrain's tests, not copied.
# What matters: SageMaker script mode with model_dir=False, every path from SM_* variables read at
# parse time (SM_MODEL_DIR, SM_CHANNEL_TRAINING, SM_CHANNEL_TESTING, SM_HOSTS: a KeyError anywhere
# else), gzip'd MNIST idx files from the channels, a TF 2.3-era custom loop with metrics'
# reset_states() and model.save(dir) as a SavedModel under model_dir/00000000.
import argparse
import gzip
import json
import os

import numpy as np
import tensorflow as tf
from tensorflow.keras import Model
from tensorflow.keras.layers import Conv2D, Dense, Flatten


class SmallConv(Model):
    def __init__(self):
        super(SmallConv, self).__init__()
        self.conv1 = Conv2D(8, 3, activation="relu")
        self.flatten = Flatten()
        self.d1 = Dense(32, activation="relu")
        self.d2 = Dense(10)

    def call(self, x):
        return self.d2(self.d1(self.flatten(self.conv1(x))))


def read_idx(data_dir, images_file, labels_file):
    with gzip.open(os.path.join(data_dir, images_file), "rb") as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(os.path.join(data_dir, labels_file), "rb") as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    return images, labels


def normalize(x, axis):
    return (x - np.mean(x, axis=axis, keepdims=True)) / (np.std(x, axis=axis, keepdims=True) + np.finfo(float).eps)


def train(args):
    x_train, y_train = read_idx(args.train, "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz")
    x_test, y_test = read_idx(args.test, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
    x_train = np.expand_dims(normalize(x_train.astype(np.float32), (1, 2)), axis=3)
    x_test = np.expand_dims(normalize(x_test.astype(np.float32), (1, 2)), axis=3)
    train_loader = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(x_train)).batch(args.batch_size)
    test_loader = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(args.batch_size)

    model = SmallConv()
    model.compile()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam(learning_rate=args.learning_rate, beta_1=args.beta_1, beta_2=args.beta_2)
    train_loss = tf.keras.metrics.Mean(name="train_loss")
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    test_loss = tf.keras.metrics.Mean(name="test_loss")
    test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = loss_fn(labels, predictions)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        train_loss(loss)
        train_accuracy(labels, predictions)

    @tf.function
    def test_step(images, labels):
        predictions = model(images, training=False)
        test_loss(loss_fn(labels, predictions))
        test_accuracy(labels, predictions)

    print("Training starts ...")
    for epoch in range(args.epochs):
        train_loss.reset_states()
        train_accuracy.reset_states()
        test_loss.reset_states()
        test_accuracy.reset_states()
        for images, labels in train_loader:
            train_step(images, labels)
        for images, labels in test_loader:
            test_step(images, labels)
        print(f"Epoch {epoch + 1}, Loss: {train_loss.result()}, Accuracy: {train_accuracy.result() * 100}, "
              f"Test Loss: {test_loss.result()}, Test Accuracy: {test_accuracy.result() * 100}")

    ckpt_dir = os.path.join(args.model_dir, "00000000")  # the serving container wants a version folder
    if not os.path.exists(ckpt_dir):
        os.makedirs(ckpt_dir)
    model.save(ckpt_dir)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--beta_1", type=float, default=0.9)
    parser.add_argument("--beta_2", type=float, default=0.999)
    parser.add_argument("--model-dir", type=str, default=os.environ["SM_MODEL_DIR"])
    parser.add_argument("--train", type=str, default=os.environ["SM_CHANNEL_TRAINING"])
    parser.add_argument("--test", type=str, default=os.environ["SM_CHANNEL_TESTING"])
    parser.add_argument("--current-host", type=str, default=os.environ["SM_CURRENT_HOST"])
    parser.add_argument("--hosts", type=list, default=json.loads(os.environ["SM_HOSTS"]))
    return parser.parse_args()


if __name__ == "__main__":
    train(parse_args())
