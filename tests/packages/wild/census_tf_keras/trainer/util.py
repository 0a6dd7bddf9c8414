# Our own reproduction of cloudml-samples census/tf-keras/trainer/util.py (commit 023b1b6): see task.py.
# Like the original it downloads the CSVs into $TMPDIR/census_data unless they are there already;
# make_data.py writes small ones there, so the tests never reach the network.
import os
import tempfile

import numpy as np
import pandas as pd
import tensorflow as tf
from six.moves import urllib

DATA_DIR = os.path.join(tempfile.gettempdir(), "census_data")
DATA_URL = "https://storage.googleapis.com/cloud-samples-data/ai-platform/census/data"
TRAINING_FILE, EVAL_FILE = "adult.data.csv", "adult.test.csv"
COLUMNS = ["age", "workclass", "education_num", "hours_per_week", "capital_gain", "income_bracket"]
LABEL = "income_bracket"
CATEGORIES = {
    "workclass": pd.api.types.CategoricalDtype(["Private", "Self-emp-inc", "State-gov"]),
    "income_bracket": pd.api.types.CategoricalDtype(["<=50K", ">50K"]),
}


def download(data_dir):
    tf.io.gfile.makedirs(data_dir)
    paths = []
    for name in (TRAINING_FILE, EVAL_FILE):
        path = os.path.join(data_dir, name)
        if not tf.io.gfile.exists(path):
            urllib.request.urlretrieve("%s/%s" % (DATA_URL, name), path)
        paths.append(path)
    return paths


def preprocess(frame):
    numeric = frame.select_dtypes(["int64"]).columns
    frame[numeric] = frame[numeric].astype("float32")
    for column, dtype in CATEGORIES.items():
        frame[column] = frame[column].astype(dtype).cat.codes
    return frame


def load_data():
    train_path, eval_path = download(DATA_DIR)
    train = preprocess(pd.read_csv(train_path, names=COLUMNS, na_values="?"))
    evaluation = preprocess(pd.read_csv(eval_path, names=COLUMNS, na_values="?"))
    train_x, train_y = train, train.pop(LABEL)
    eval_x, eval_y = evaluation, evaluation.pop(LABEL)
    both = pd.concat([train_x, eval_x], keys=["train", "eval"])
    for column in both.columns:
        if both[column].dtype == "float32":
            both[column] = (both[column] - both[column].mean()) / both[column].std()
    train_x, eval_x = both.xs("train"), both.xs("eval")
    return (
        train_x,
        np.asarray(train_y).astype("float32").reshape((-1, 1)),
        eval_x,
        np.asarray(eval_y).astype("float32").reshape((-1, 1)),
    )
