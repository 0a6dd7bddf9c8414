"""python -m trainer.task: learn which side of a circle a point lies on, from a data channel."""

import argparse
import glob
import json
import os
import time

import numpy as np
import tensorflow as tf


class EpochLine(tf.keras.callbacks.Callback):
    """After each epoch, one JSON line on stdout: what fills the live line and the report's epochs and examples/s."""

    def __init__(self, examples, epochs):
        super().__init__()
        self.examples, self.epochs = examples, epochs

    def on_epoch_begin(self, epoch, logs=None):
        self.started = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        seconds = time.perf_counter() - self.started
        metrics = {name: float(value) for name, value in (logs or {}).items()}  # loss, accuracy, val_loss, val_accuracy
        print(json.dumps({"event": "epoch", "epoch": epoch + 1, "epochs": self.epochs, **metrics,
                          "examples_per_sec": self.examples / seconds, "epoch_time_s": seconds}), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--data", default=os.environ.get("SM_CHANNEL_TRAIN"))  # the `train` channel
    args = parser.parse_args()

    rows = np.concatenate([np.loadtxt(f, delimiter=",", skiprows=1) for f in sorted(glob.glob(f"{args.data}/*.csv"))])
    x, y = rows[:, :2].astype("float32"), rows[:, 2].astype("int32")

    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(32, activation="relu"),
                                 tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(2, activation="softmax")])
    model.compile(tf.keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy", metrics=["accuracy"])
    trained_on = int(np.ceil(len(x) * (1 - 0.2)))  # validation_split=0.2: Keras trains on the first four fifths
    # TensorBoard's event files where the platform reads them (Vertex AI: $AIP_TENSORBOARD_LOG_DIR; SageMaker:
    # output/tensorboard): `cloudtrain tensorboard JOB` shows the loss and accuracy curves from them.
    log_dir = os.environ.get("AIP_TENSORBOARD_LOG_DIR") or os.path.join(os.environ.get("SM_OUTPUT_DIR", "/opt/ml/output"), "tensorboard")
    history = model.fit(x, y, epochs=args.epochs, validation_split=0.2, verbose=0,
                        callbacks=[EpochLine(trained_on, args.epochs), tf.keras.callbacks.TensorBoard(log_dir)])

    model_dir = os.environ.get("AIP_MODEL_DIR") or os.environ["SM_MODEL_DIR"]  # where the platform keeps it
    model.export(model_dir)
    print(json.dumps({"event": "done", "val_accuracy": history.history["val_accuracy"][-1]}))


if __name__ == "__main__":
    main()
