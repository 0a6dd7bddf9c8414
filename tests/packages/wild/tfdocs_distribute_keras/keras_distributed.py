# Our own reproduction of tensorflow/docs site/en/tutorials/distribute/keras.ipynb (commit
# f140399159270636d4924fb3796624c5ec306d6e, its Keras 2 cells as one script); for cloudtrain's tests, not
# copied. What matters: MirroredStrategy around compile, the tutorial's callbacks (TensorBoard into ./logs,
# ModelCheckpoint to a TF checkpoint prefix ./training_checkpoints/ckpt_{epoch} with save_weights_only,
# LearningRateScheduler, a callback printing model.optimizer.lr), load_weights(latest_checkpoint) and
# model.save("saved_model/") as a SavedModel in the working directory. One change, for offline tests: the
# tutorial loads MNIST with tensorflow_datasets (a download); this reads the same arrays from $MNIST_NPZ.
import os

import numpy as np
import tensorflow as tf

with np.load(os.environ["MNIST_NPZ"]) as data:
    x_train, y_train = data["x_train"][..., None].astype("float32") / 255, data["y_train"]
    x_test, y_test = data["x_test"][..., None].astype("float32") / 255, data["y_test"]

strategy = tf.distribute.MirroredStrategy()
print("Number of devices: {}".format(strategy.num_replicas_in_sync))

BATCH_SIZE = 64 * strategy.num_replicas_in_sync
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).cache().shuffle(10000).batch(BATCH_SIZE)
eval_dataset = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(BATCH_SIZE)

with strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(8, 3, activation="relu", input_shape=(28, 28, 1)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(32, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=tf.keras.optimizers.Adam(), metrics=["accuracy"])

checkpoint_dir = "./training_checkpoints"
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt_{epoch}")


def decay(epoch):
    if epoch < 3:
        return 1e-3
    elif epoch >= 3 and epoch < 7:
        return 1e-4
    return 1e-5


class PrintLR(tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print("\nLearning rate for epoch {} is {}".format(epoch + 1, model.optimizer.lr.numpy()))


callbacks = [
    tf.keras.callbacks.TensorBoard(log_dir="./logs"),
    tf.keras.callbacks.ModelCheckpoint(filepath=checkpoint_prefix, save_weights_only=True),
    tf.keras.callbacks.LearningRateScheduler(decay),
    PrintLR(),
]
EPOCHS = 2
model.fit(train_dataset, epochs=EPOCHS, callbacks=callbacks)

model.load_weights(tf.train.latest_checkpoint(checkpoint_dir))
eval_loss, eval_acc = model.evaluate(eval_dataset)
print("Eval loss: {}, Eval accuracy: {}".format(eval_loss, eval_acc))

path = "saved_model/"
model.save(path, save_format="tf")
