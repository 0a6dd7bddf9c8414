# Our own reproduction of the trainer/model.py that training-data-analyst 2_hyperparameter_tuning_vertex.ipynb
# (commit 88d4b21) writes: the taxifare model of ../taxifare plus a hypertune reporting callback; see task.py.
import datetime
import os

import hypertune
import numpy as np
import tensorflow as tf
from tensorflow import feature_column as fc
from tensorflow.keras.callbacks import ModelCheckpoint, TensorBoard
from tensorflow.keras.layers import Dense, DenseFeatures, Input, Lambda
from tensorflow.keras.models import Model

CSV_COLUMNS = ["fare_amount", "pickup_datetime", "pickup_longitude", "pickup_latitude",
               "dropoff_longitude", "dropoff_latitude", "passenger_count", "key"]
LABEL_COLUMN = "fare_amount"
DEFAULTS = [[0.0], ["na"], [0.0], [0.0], [0.0], [0.0], [0.0], ["na"]]


def features_and_labels(row):
    row.pop("key")
    label = row.pop(LABEL_COLUMN)
    return row, label


def load_dataset(pattern, batch_size, num_repeat):
    dataset = tf.data.experimental.make_csv_dataset(
        file_pattern=pattern, batch_size=batch_size, column_names=CSV_COLUMNS,
        column_defaults=DEFAULTS, num_epochs=num_repeat,
    )
    return dataset.map(features_and_labels)


def euclidean(params):
    lon1, lat1, lon2, lat2 = params
    return tf.sqrt((lon2 - lon1) ** 2 + (lat2 - lat1) ** 2)


def transform(inputs, numeric_cols, nbuckets):
    transformed = inputs.copy()
    del transformed["pickup_datetime"]
    feature_columns = {name: fc.numeric_column(name) for name in numeric_cols}
    for lon in ["pickup_longitude", "dropoff_longitude"]:
        transformed[lon] = Lambda(lambda x: (x + 78) / 8.0, name="scale_{}".format(lon))(inputs[lon])
    for lat in ["pickup_latitude", "dropoff_latitude"]:
        transformed[lat] = Lambda(lambda x: (x - 37) / 8.0, name="scale_{}".format(lat))(inputs[lat])
    transformed["euclidean"] = Lambda(euclidean, name="euclidean")(
        [inputs["pickup_longitude"], inputs["pickup_latitude"], inputs["dropoff_longitude"], inputs["dropoff_latitude"]]
    )
    feature_columns["euclidean"] = fc.numeric_column("euclidean")
    transformed["hourofday"] = Lambda(
        lambda x: tf.strings.to_number(tf.strings.substr(x, 11, 2), out_type=tf.dtypes.int32), name="hourofday"
    )(inputs["pickup_datetime"])
    feature_columns["hourofday"] = fc.indicator_column(fc.categorical_column_with_identity("hourofday", 24))
    buckets = np.linspace(0, 1, nbuckets).tolist()
    ploc = fc.crossed_column(
        [fc.bucketized_column(feature_columns["pickup_latitude"], buckets),
         fc.bucketized_column(feature_columns["pickup_longitude"], buckets)], nbuckets * nbuckets)
    feature_columns["pickup_loc"] = fc.embedding_column(ploc, 10)
    return transformed, feature_columns


def rmse(y_true, y_pred):
    return tf.sqrt(tf.reduce_mean(tf.square(y_pred - y_true)))


def build_dnn_model(nbuckets, nnsize, lr):
    numeric = set(CSV_COLUMNS) - {LABEL_COLUMN, "key", "pickup_datetime"}
    inputs = {name: Input(name=name, shape=(), dtype="float32") for name in numeric}
    inputs["pickup_datetime"] = Input(name="pickup_datetime", shape=(), dtype="string")
    transformed, feature_columns = transform(inputs, numeric, nbuckets)
    x = DenseFeatures(feature_columns.values())(transformed)
    for layer, neurons in enumerate(nnsize):
        x = Dense(neurons, activation="relu", name="h{}".format(layer))(x)
    model = Model(inputs, Dense(1, name="fare")(x))
    model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=lr), loss="mse", metrics=[rmse, "mse"])
    return model


hpt = hypertune.HyperTune()


class HPTCallback(tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        hpt.report_hyperparameter_tuning_metric(
            hyperparameter_metric_tag="val_rmse", metric_value=logs["val_rmse"], global_step=epoch
        )


def train_and_evaluate(hparams):
    hparams["nnsize"] = [int(s) for s in hparams["nnsize"].split()]
    output_dir = hparams["output_dir"]
    timestamp = datetime.datetime.now().strftime("%Y%m%d%H%M%S")
    export_path = os.path.join(output_dir, "savedmodel", timestamp)
    if tf.io.gfile.exists(output_dir):
        tf.io.gfile.rmtree(output_dir)
    model = build_dnn_model(hparams["nbuckets"], hparams["nnsize"], hparams["lr"])
    trainds = load_dataset(hparams["train_data_path"], hparams["batch_size"], None).prefetch(1)
    evalds = load_dataset(hparams["eval_data_path"], hparams["batch_size"], 1).prefetch(1)
    steps = hparams["num_examples_to_train_on"] // (hparams["batch_size"] * hparams["num_evals"])
    model.fit(
        trainds, validation_data=evalds, epochs=hparams["num_evals"], steps_per_epoch=max(1, steps), verbose=2,
        callbacks=[ModelCheckpoint(os.path.join(output_dir, "checkpoints"), save_weights_only=True, verbose=1),
                   TensorBoard(os.path.join(output_dir, "tensorboard")), HPTCallback()],
    )
    tf.saved_model.save(model, export_path)
    print("exported", export_path)
