"""The platform contract: Vertex, SageMaker, ML Engine's --job-dir, local defaults."""

from __future__ import annotations

import json

import pytest

from trainer import env
from trainer.errors import TrainerError

VERTEX = {
    "AIP_MODEL_DIR": "gs://bucket/run7/model/",
    "AIP_CHECKPOINT_DIR": "gs://bucket/run7/checkpoints/",
    "AIP_TENSORBOARD_LOG_DIR": "gs://bucket/run7/logs/",
    "CLOUD_ML_JOB_ID": "1234567890",
}
SAGEMAKER = {
    "SM_MODEL_DIR": "/opt/ml/model",
    "SM_OUTPUT_DATA_DIR": "/opt/ml/output/data",
    "SM_CHANNEL_TRAINING": "/opt/ml/input/data/training",
    "SM_CHANNEL_VALIDATION": "/opt/ml/input/data/validation",
    "SM_HPS": json.dumps({"epochs": 3, "batch_size": 128}),
    "SM_NUM_GPUS": "4",
    "SM_HOSTS": json.dumps(["algo-1", "algo-2"]),
    "SM_CURRENT_HOST": "algo-2",
    "TRAINING_JOB_NAME": "ct-job-1",
}


def test_vertex_variables_give_every_directory():
    c = env.resolve(VERTEX)
    assert c.platform == "vertex"
    assert c.job_id == "1234567890"
    assert c.dirs.model_dir == "gs://bucket/run7/model/"
    assert c.dirs.checkpoint_dir == "gs://bucket/run7/checkpoints/"
    assert c.dirs.tensorboard_dir == "gs://bucket/run7/logs/"
    assert c.dirs.output_dir is None
    assert c.dirs.origin["model_dir"] == "AIP_MODEL_DIR"
    assert c.export_layout == "root"  # Vertex wants saved_model.pb in AIP_MODEL_DIR itself


def test_vertex_without_checkpoint_and_tensorboard_vars_uses_siblings_of_the_model_dir():
    c = env.resolve({"AIP_MODEL_DIR": "gs://bucket/base/model/"})
    assert c.dirs.checkpoint_dir == "gs://bucket/base/checkpoints"
    assert c.dirs.tensorboard_dir == "gs://bucket/base/logs"


def test_vertex_managed_dataset_uri_is_the_training_data():
    c = env.resolve(VERTEX | {"AIP_TRAINING_DATA_URI": "gs://b/data/train-*.tfrecord"})
    assert (c.train_data, c.train_data_var) == ("gs://b/data/train-*.tfrecord", "AIP_TRAINING_DATA_URI")


def test_sagemaker_variables():
    c = env.resolve(SAGEMAKER)
    assert c.platform == "sagemaker"
    assert c.job_id == "ct-job-1"
    assert c.dirs.model_dir == "/opt/ml/model"
    assert c.dirs.checkpoint_dir == "/opt/ml/checkpoints"
    assert c.dirs.tensorboard_dir == "/opt/ml/output/tensorboard"
    assert c.dirs.output_dir == "/opt/ml/output/data"
    assert (c.train_data, c.train_data_var) == ("/opt/ml/input/data/training", "SM_CHANNEL_TRAINING")
    assert c.val_data == "/opt/ml/input/data/validation"
    assert c.hyperparameters == {"epochs": 3, "batch_size": 128}
    assert c.num_gpus == 4
    assert c.hosts == ("algo-1", "algo-2") and c.current_host == "algo-2"
    assert c.export_layout == "versioned"  # TF Serving loads model/<version>/


def test_sagemaker_train_channel_named_train_also_counts():
    moved = env.resolve({"SM_MODEL_DIR": "/x/model", "SAGEMAKER_BASE_DIR": "/runs/algo-1"})
    assert (moved.dirs.checkpoint_dir, moved.dirs.tensorboard_dir) == (
        "/runs/algo-1/checkpoints",
        "/runs/algo-1/output/tensorboard",
    )
    c = env.resolve({"SM_MODEL_DIR": "/opt/ml/model", "SM_CHANNEL_TRAIN": "/opt/ml/input/data/train"})
    assert c.train_data == "/opt/ml/input/data/train"


def test_job_dir_overrides_platform_variables_like_ml_engine():
    c = env.resolve(VERTEX, job_dir="gs://other/job")
    assert c.dirs.model_dir == "gs://other/job/model"
    assert c.dirs.checkpoint_dir == "gs://other/job/checkpoints"
    assert c.dirs.tensorboard_dir == "gs://other/job/logs"
    assert set(c.dirs.origin.values()) == {"--job-dir"}


def test_specific_flags_override_job_dir_and_environment():
    c = env.resolve(SAGEMAKER, job_dir="s3://b/j", model_dir="s3://b/m", checkpoint_dir="/tmp/ck")
    assert c.dirs.model_dir == "s3://b/m"
    assert c.dirs.checkpoint_dir == "/tmp/ck"
    assert c.dirs.tensorboard_dir == "s3://b/j/logs"
    assert c.dirs.output_dir == "/opt/ml/output/data"
    assert c.dirs.origin["model_dir"] == "--model-dir"


def test_local_defaults():
    c = env.resolve({})
    assert c.platform == "local"
    assert c.dirs.model_dir == "trainer_output/model"
    assert c.dirs.checkpoint_dir == "trainer_output/checkpoints"
    assert c.dirs.tensorboard_dir == "trainer_output/logs"
    assert c.train_data is None and c.hyperparameters == {}


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"SM_HPS": "{epochs: 3}"}, "SM_HPS is not valid JSON"),
        ({"SM_HPS": "[1, 2]"}, "JSON object"),
        ({"SM_HOSTS": '"algo-1"'}, "SM_HOSTS must be a JSON list"),
        ({"SM_NUM_GPUS": "four"}, "SM_NUM_GPUS must be an integer"),
    ],
)
def test_malformed_platform_variables_are_reported(bad, message):
    with pytest.raises(TrainerError, match=message):
        env.resolve({"SM_MODEL_DIR": "/opt/ml/model"} | bad)


def test_channels_are_read_on_vertex_too():
    c = env.resolve(
        {
            "AIP_MODEL_DIR": "gs://b/out/model/",
            "SM_CHANNEL_TRAIN": "/gcs/b/digits/train",
            "SM_CHANNEL_VALIDATION": "/gcs/b/digits/val",
            "SM_CHANNEL_EXTRA": "/gcs/b/x",
        }
    )
    assert c.platform == "vertex"
    assert (c.train_data, c.train_data_var, c.val_data) == (
        "/gcs/b/digits/train",
        "SM_CHANNEL_TRAIN",
        "/gcs/b/digits/val",
    )
    assert c.channels == {"EXTRA": "/gcs/b/x", "TRAIN": "/gcs/b/digits/train", "VALIDATION": "/gcs/b/digits/val"}
    assert (
        env.resolve(
            {"AIP_MODEL_DIR": "/m", "AIP_TRAINING_DATA_URI": "gs://b/t", "SM_CHANNEL_TRAIN": "/gcs/b/x"}
        ).train_data
        == "gs://b/t"
    )


def test_channels_sagemaker_shards_by_key_are_known_as_presharded():
    idc = json.dumps(
        {"train": {"S3DistributionType": "ShardedByS3Key"}, "val": {"S3DistributionType": "FullyReplicated"}}
    )
    c = env.resolve(
        {
            "SM_MODEL_DIR": "/opt/ml/model",
            "SM_INPUT_DATA_CONFIG": idc,
            "SM_CHANNEL_TRAIN": "/opt/ml/input/data/train",
            "SM_CHANNEL_VAL": "/opt/ml/input/data/val",
        }
    )
    assert c.presharded == frozenset({"/opt/ml/input/data/train"})
    assert env.resolve({"SM_MODEL_DIR": "/m"}).presharded == frozenset()
