# Our own reproduction of keras-team/keras-io examples/vision/mnist_convnet.py (commit
# 02cfe8063b505adc073986c91729f22039f77ad0); written for cloudtrain's tests, not copied. What matters:
# a Keras 3 script (`import keras`, no tf.keras), no arguments, no saving, fit(validation_split=0.1)
# then evaluate with the score printed last. One change, for offline tests: the example downloads MNIST
# with keras.datasets.mnist.load_data() (hash-checked); this reads the same arrays from $MNIST_NPZ.
import os

import keras
import numpy as np
from keras import layers

num_classes = 10
input_shape = (28, 28, 1)

with np.load(os.environ["MNIST_NPZ"]) as data:
    (x_train, y_train), (x_test, y_test) = (data["x_train"], data["y_train"]), (data["x_test"], data["y_test"])

x_train = x_train.astype("float32") / 255
x_test = x_test.astype("float32") / 255
x_train = np.expand_dims(x_train, -1)
x_test = np.expand_dims(x_test, -1)
print("x_train shape:", x_train.shape)
print(x_train.shape[0], "train samples")

y_train = keras.utils.to_categorical(y_train, num_classes)
y_test = keras.utils.to_categorical(y_test, num_classes)

model = keras.Sequential(
    [
        keras.Input(shape=input_shape),
        layers.Conv2D(8, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(num_classes, activation="softmax"),
    ]
)
model.summary()

batch_size = 128
epochs = 3
model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, validation_split=0.1)

score = model.evaluate(x_test, y_test, verbose=0)
print("Test loss:", score[0])
print("Test accuracy:", score[1])
