# Our own reproduction of cloudml-samples census/tf-keras/trainer/model.py (commit 023b1b6): see task.py.
import tensorflow as tf


def input_fn(features, labels, shuffle, num_epochs, batch_size):
    dataset = tf.data.Dataset.from_tensor_slices((features, labels) if labels is not None else features)
    if shuffle:
        dataset = dataset.shuffle(buffer_size=len(features))
    return dataset.repeat(num_epochs).batch(batch_size)


def create_keras_model(input_dim, learning_rate):
    Dense = tf.keras.layers.Dense
    model = tf.keras.Sequential(
        [
            Dense(100, activation=tf.nn.relu, kernel_initializer="uniform", input_shape=(input_dim,)),
            Dense(75, activation=tf.nn.relu),
            Dense(50, activation=tf.nn.relu),
            Dense(25, activation=tf.nn.relu),
            Dense(1, activation=tf.nn.sigmoid),
        ]
    )
    optimizer = tf.keras.optimizers.RMSprop(lr=learning_rate)  # the TF 1.x spelling
    model.compile(loss="binary_crossentropy", optimizer=optimizer, metrics=["accuracy"])
    return model
