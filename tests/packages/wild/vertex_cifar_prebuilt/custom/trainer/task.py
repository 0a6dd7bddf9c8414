# Our own reproduction of the trainer/task.py that GoogleCloudPlatform/vertex-ai-samples
# notebooks/community/sdk/sdk_custom_image_classification_batch.ipynb (commit 1f949ce9c2577d229b2da8d58d7a1c0a696612f0)
# writes; for cloudtrain's tests, not copied. What matters: strict argparse whose --model-dir (dest model_dir)
# defaults to AIP_MODEL_DIR, --distribute single|mirror|multi choosing the strategy, fit with epochs/steps,
# model.save(args.model_dir) as a SavedModel (TF 2.1 era), the prebuilt image named by the author
# (gcr.io/cloud-aiplatform/training/tf-cpu.2-1, launch.sh). One change, for offline tests: the notebook
# loads CIFAR-10 with tensorflow_datasets (a download); this reads the same arrays from $CIFAR_NPZ.
import argparse
import os
import sys

import numpy as np
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--model-dir", dest="model_dir", default=os.getenv("AIP_MODEL_DIR"), type=str, help="Model dir.")
parser.add_argument("--lr", dest="lr", default=0.01, type=float, help="Learning rate.")
parser.add_argument("--epochs", dest="epochs", default=10, type=int, help="Number of epochs.")
parser.add_argument("--steps", dest="steps", default=200, type=int, help="Number of steps per epoch.")
parser.add_argument("--distribute", dest="distribute", type=str, default="single", help="distributed training strategy")
args = parser.parse_args()

print("Python Version = {}".format(sys.version))
print("TensorFlow Version = {}".format(tf.__version__))
print("TF_CONFIG = {}".format(os.environ.get("TF_CONFIG", "Not found")))

if args.distribute == "single":
    strategy = tf.distribute.OneDeviceStrategy(device="/gpu:0" if tf.config.list_physical_devices("GPU") else "/cpu:0")
elif args.distribute == "mirror":
    strategy = tf.distribute.MirroredStrategy()
elif args.distribute == "multi":
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
print("num_replicas_in_sync = {}".format(strategy.num_replicas_in_sync))

BUFFER_SIZE = 10000
BATCH_SIZE = 64


def make_datasets_unbatched():
    with np.load(os.environ["CIFAR_NPZ"]) as data:
        images, labels = data["images"].astype("float32") / 255.0, data["labels"]
    return tf.data.Dataset.from_tensor_slices((images, labels)).cache().shuffle(BUFFER_SIZE).repeat()


def build_and_compile_cnn_model():
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(8, 3, activation="relu", input_shape=(32, 32, 3)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(10, activation="softmax"),
    ])
    model.compile(loss=tf.keras.losses.sparse_categorical_crossentropy,
                  optimizer=tf.keras.optimizers.SGD(learning_rate=args.lr), metrics=["accuracy"])
    return model


NUM_WORKERS = strategy.num_replicas_in_sync
GLOBAL_BATCH_SIZE = BATCH_SIZE * NUM_WORKERS
train_dataset = make_datasets_unbatched().batch(GLOBAL_BATCH_SIZE)
with strategy.scope():
    model = build_and_compile_cnn_model()
model.fit(x=train_dataset, epochs=args.epochs, steps_per_epoch=args.steps)
model.save(args.model_dir)
