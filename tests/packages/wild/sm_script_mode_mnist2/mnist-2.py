# Our own reproduction of aws/amazon-sagemaker-examples
# sagemaker-python-sdk/tensorflow_script_mode_training_and_serving/mnist-2.py (commit 14d19a7c5d9f82a71ad936ca36d97050adbef424)
# and its notebook's estimator (launch.py, commit 06880b1); for cloudtrain's tests, not copied. What matters:
# an entry point with no source_dir (SageMaker uploads the file alone), parse_known_args taking the
# --model_dir SageMaker passes, SM_MODEL_DIR / SM_CHANNEL_TRAINING / SM_HOSTS / SM_CURRENT_HOST read as
# defaults, .npy arrays from the training channel, two instances with a parameter server, and the
# TF 2.1 save: model.save(dir, 'my_model.h5') (the second argument is Keras 2's overwrite flag).
import argparse
import json
import os

import numpy as np
import tensorflow as tf


def model(x_train, y_train, x_test, y_test):
    model = tf.keras.models.Sequential([
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(64, activation=tf.nn.relu),
        tf.keras.layers.Dropout(0.4),
        tf.keras.layers.Dense(10, activation=tf.nn.softmax),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train)
    model.evaluate(x_test, y_test)
    return model


def _load(base_dir, prefix):
    return np.load(os.path.join(base_dir, prefix + "_data.npy")), np.load(os.path.join(base_dir, prefix + "_labels.npy"))


def _parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", type=str)  # always passed by SageMaker: by default an S3 path
    parser.add_argument("--sm-model-dir", type=str, default=os.environ.get("SM_MODEL_DIR"))
    parser.add_argument("--train", type=str, default=os.environ.get("SM_CHANNEL_TRAINING"))
    parser.add_argument("--hosts", type=list, default=json.loads(os.environ.get("SM_HOSTS")))
    parser.add_argument("--current-host", type=str, default=os.environ.get("SM_CURRENT_HOST"))
    return parser.parse_known_args()


if __name__ == "__main__":
    args, unknown = _parse_args()
    train_data, train_labels = _load(args.train, "train")
    eval_data, eval_labels = _load(args.train, "eval")
    mnist_classifier = model(train_data, train_labels, eval_data, eval_labels)
    if args.current_host == args.hosts[0]:
        mnist_classifier.save(os.path.join(args.sm_model_dir, "000000001"), "my_model.h5")
