# Our own reproduction of keras-team/keras-io examples/structured_data/structured_data_classification_with_feature_space.py
# (commit f54746f7633a6e4eedb38f273ab4c71944f01df6); for cloudtrain's tests, not copied. What matters: a
# Keras 3 script that reads its CSV with pandas (imported, declared nowhere: the example assumes the
# image has it), tf.data from a DataFrame, keras.utils.FeatureSpace adapted on the training set, no
# arguments, nothing saved. One change, for offline tests: the example reads heart.csv from a URL; this
# reads the same columns from $HEART_CSV.
import os

import keras
import pandas as pd
import tensorflow as tf
from keras.utils import FeatureSpace

dataframe = pd.read_csv(os.environ["HEART_CSV"])
print(dataframe.shape)
val_dataframe = dataframe.sample(frac=0.2, random_state=1337)
train_dataframe = dataframe.drop(val_dataframe.index)


def dataframe_to_dataset(dataframe):
    dataframe = dataframe.copy()
    labels = dataframe.pop("target")
    ds = tf.data.Dataset.from_tensor_slices((dict(dataframe), labels))
    return ds.shuffle(buffer_size=len(dataframe))


train_ds = dataframe_to_dataset(train_dataframe).batch(32)
val_ds = dataframe_to_dataset(val_dataframe).batch(32)

feature_space = FeatureSpace(
    features={
        "sex": FeatureSpace.integer_categorical(num_oov_indices=0),
        "cp": FeatureSpace.integer_categorical(num_oov_indices=0),
        "thal": FeatureSpace.string_categorical(num_oov_indices=0),
        "age": FeatureSpace.float_discretized(num_bins=5),
        "chol": FeatureSpace.float_normalized(),
        "thalach": FeatureSpace.float_normalized(),
    },
    crosses=[FeatureSpace.cross(feature_names=("sex", "age"), crossing_dim=16)],
    output_mode="concat",
)
feature_space.adapt(train_ds.map(lambda x, _: x))

preprocessed_train_ds = train_ds.map(lambda x, y: (feature_space(x), y), num_parallel_calls=tf.data.AUTOTUNE)
preprocessed_val_ds = val_ds.map(lambda x, y: (feature_space(x), y), num_parallel_calls=tf.data.AUTOTUNE)

encoded_features = feature_space.get_encoded_features()
x = keras.layers.Dense(32, activation="relu")(encoded_features)
x = keras.layers.Dropout(0.5)(x)
predictions = keras.layers.Dense(1, activation="sigmoid")(x)
training_model = keras.Model(inputs=encoded_features, outputs=predictions)
training_model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
training_model.fit(preprocessed_train_ds, epochs=3, validation_data=preprocessed_val_ds, verbose=2)
print("validation accuracy:", training_model.evaluate(preprocessed_val_ds, verbose=0)[1])
