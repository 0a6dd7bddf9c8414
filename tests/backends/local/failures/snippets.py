"""Keras 2 habits run under Keras 3, and one undeclared import: ``python snippets.py OUT NAME...`` writes
the uncaught traceback of each NAME to OUT/NAME.log, as a replica's log ends.

The ``tf2.17_*.log`` files beside it were recorded with it under TensorFlow 2.17.1 / Keras 3.12.4 (the
Vertex default image layer, 2026-12-02; site-packages and the script shown where an image has them,
/usr/local/lib/python3.10 and /app/trainer); ``tf2.11_numpy2_import.log`` is the log of a --local run of
``import tensorflow`` under TensorFlow 2.11.1 with NumPy 2.2.6, as the 2.11 image layer resolved before #47."""

import sys
import traceback

import tensorflow as tf


def reset_states():  # tensorflow/docs custom_training, SageMaker's frameworks/tensorflow train.py
    train_loss = tf.keras.metrics.Mean(name="train_loss")
    train_loss.reset_states()


def lambda_shape():  # a Keras 2 Lambda that Keras 2 never asked to infer a shape for
    inputs = tf.keras.Input((4,))
    tf.keras.layers.Lambda(lambda x: tf.py_function(lambda t: t * 2, [x], tf.float32))(inputs)


def layers_experimental():  # TF 2.3-2.5 era preprocessing layers
    tf.keras.layers.experimental.preprocessing.Normalization()


def optimizers_legacy():  # TF 2.11-2.15 scripts that kept the old optimizers
    tf.keras.optimizers.legacy.Adam(learning_rate=0.01)


def save_folder():  # SageMaker's serving layout: a SavedModel under model_dir/1
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.save(sys.argv[1] + "/export/1")


def checkpoint_prefix():  # a TF checkpoint prefix, as Keras 2 took it
    tf.keras.callbacks.ModelCheckpoint(filepath=sys.argv[1] + "/ckpt/ckpt-{epoch}", save_weights_only=True)


def sgd_lr():
    tf.keras.optimizers.SGD(lr=0.1)


def missing_module():  # Vertex tuning code's undeclared import
    import hypertune  # noqa: F401


for name in sys.argv[2:]:
    try:
        globals()[name]()
    except BaseException:
        with open(f"{sys.argv[1]}/{name}.log", "w") as out:
            out.write("Epoch 1/2\n" + traceback.format_exc())
    else:
        print(name, "raised nothing")
