# Our own reproduction of tensorflow/docs site/en/tutorials/keras/classification.ipynb (commit 945a448704b25a0897ed24abd45ab4d0b0d6f3c2;
# basic image classification, its cells as one script); for cloudtrain's tests, not copied. What matters: the
# beginner's script as people paste it: no arguments, no strategy, Fashion-MNIST from tf.keras.datasets
# (the cached download in $KERAS_HOME: make_data.py writes it), Flatten(input_shape=...), fit, evaluate
# printing the test accuracy last, nothing saved.
import numpy as np
import tensorflow as tf

print(tf.__version__)

fashion_mnist = tf.keras.datasets.fashion_mnist
(train_images, train_labels), (test_images, test_labels) = fashion_mnist.load_data()
class_names = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
train_images = train_images / 255.0
test_images = test_images / 255.0

model = tf.keras.Sequential([
    tf.keras.layers.Flatten(input_shape=(28, 28)),
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dense(10),
])
model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
model.fit(train_images, train_labels, epochs=3)

test_loss, test_acc = model.evaluate(test_images, test_labels, verbose=2)
probability_model = tf.keras.Sequential([model, tf.keras.layers.Softmax()])
predictions = probability_model.predict(test_images)
print("first prediction:", class_names[int(np.argmax(predictions[0]))])
print("\nTest accuracy:", test_acc)
