"""Keras + MirroredStrategy, as the TensorFlow distributed-training tutorial writes it.

Build and compile under strategy.scope(), scale the batch by the replicas, TensorBoard and
ModelCheckpoint callbacks, and the model saved where the platform keeps it.
"""

import argparse
import os

import tensorflow as tf
from sklearn.datasets import load_digits  # declared in ../setup.py's install_requires


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    args, _ = parser.parse_known_args()

    strategy = tf.distribute.MirroredStrategy()
    print(f"Number of devices: {strategy.num_replicas_in_sync}")
    batch_size = args.batch_size * strategy.num_replicas_in_sync

    images, labels = load_digits(return_X_y=True)
    images = (images / 16.0).reshape(-1, 8, 8, 1).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(2000).batch(batch_size)

    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.Input(shape=(8, 8, 1)),
            tf.keras.layers.Conv2D(16, 3, activation="relu"),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(10),
        ])
        model.compile(
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            optimizer=tf.keras.optimizers.Adam(),
            metrics=["accuracy"],
        )

    # Where the platform wants things: Vertex sets AIP_*, SageMaker sets SM_*.
    model_dir = os.environ.get("AIP_MODEL_DIR") or os.environ.get("SM_MODEL_DIR") or "model"
    log_dir = os.environ.get("AIP_TENSORBOARD_LOG_DIR") or os.path.join(
        os.environ.get("SM_OUTPUT_DATA_DIR", "."), "logs")
    checkpoint_dir = os.environ.get("AIP_CHECKPOINT_DIR") or "checkpoints"
    callbacks = [
        tf.keras.callbacks.TensorBoard(log_dir=log_dir),
        tf.keras.callbacks.ModelCheckpoint(
            filepath=os.path.join(checkpoint_dir, "ckpt_{epoch}.weights.h5"), save_weights_only=True),
    ]
    model.fit(dataset, epochs=args.epochs, callbacks=callbacks)

    os.makedirs(model_dir, exist_ok=True)
    model.save(os.path.join(model_dir, "digits.keras"))
    print(f"saved the model to {model_dir}")


if __name__ == "__main__":
    main()
