# Our own reproduction of GoogleCloudPlatform/cloudml-samples census/tf-keras/trainer/task.py
# (commit 023b1b608ec1d383b357ac244c6f402440104d2b), written for cloudtrain's tests, not copied.
# What matters to cloudtrain: an ML Engine package with no setup.py (gcloud generates one), a
# requirements.txt beside the package that gcloud never reads, pandas imported but undeclared,
# --job-dir required and parsed with parse_known_args, TF 1.13-era tf.keras: TensorBoard under the
# job dir and tf.keras.experimental.export_saved_model (gone in TF 2.x), the gcloud line in launch.sh.
import argparse
import os

import tensorflow as tf

from . import model
from . import util


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-dir", type=str, required=True, help="where checkpoints and the export go")
    parser.add_argument("--num-epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--verbosity", choices=["DEBUG", "ERROR", "FATAL", "INFO", "WARN"], default="INFO")
    args, _ = parser.parse_known_args()
    return args


def train_and_evaluate(args):
    train_x, train_y, eval_x, eval_y = util.load_data()
    num_train_examples, input_dim = train_x.shape
    keras_model = model.create_keras_model(input_dim=input_dim, learning_rate=args.learning_rate)
    training = model.input_fn(train_x.values, train_y, True, args.num_epochs, args.batch_size)
    validation = model.input_fn(eval_x.values, eval_y, False, args.num_epochs, eval_x.shape[0])
    decay = tf.keras.callbacks.LearningRateScheduler(lambda epoch: args.learning_rate + 0.02 * 0.5 ** (1 + epoch))
    board = tf.keras.callbacks.TensorBoard(os.path.join(args.job_dir, "keras_tensorboard"), histogram_freq=1)
    keras_model.fit(
        training,
        steps_per_epoch=max(1, num_train_examples // args.batch_size),
        epochs=args.num_epochs,
        validation_data=validation,
        validation_steps=1,
        verbose=2,
        callbacks=[decay, board],
    )
    export_path = os.path.join(args.job_dir, "keras_export")
    tf.keras.experimental.export_saved_model(keras_model, export_path)
    print("Model exported to: {}".format(export_path))


if __name__ == "__main__":
    args = get_args()
    tf.compat.v1.logging.set_verbosity(args.verbosity)
    train_and_evaluate(args)
