"""Flags, SM_HPS hyperparameters, the data spec and event lines (no TensorFlow)."""

from __future__ import annotations

import json

import pytest

from trainer import events
from trainer.cli import build_parser, hps_to_argv, parse_args
from trainer.data_spec import DataSpec, parse_data_spec
from trainer.errors import TrainerError


def test_defaults():
    args = parse_args([], {})
    assert (args.data, args.model, args.strategy, args.precision) == (None, "cnn", "auto", "auto")
    assert args.batch_size == 32 and args.cpu_devices == 1 and not args.no_lr_scaling


def test_sm_hps_are_defaults_that_arguments_override():
    environ = {"SM_HPS": json.dumps({"epochs": 3, "batch_size": 128, "no_lr_scaling": True, "lr": "0.01"})}
    args = parse_args(["--epochs", "7"], environ)
    assert args.epochs == 7  # argument wins
    assert args.batch_size == 128 and args.no_lr_scaling and args.lr == 0.01


def test_snake_case_flags_are_accepted():
    args = parse_args(["--batch_size", "16", "--job_dir=gs://b/j", "--cpu_devices", "2"], {})
    assert (args.batch_size, args.job_dir, args.cpu_devices) == (16, "gs://b/j", 2)


def test_unknown_hyperparameter_is_reported_with_a_suggestion_and_skipped():
    warnings: list[str] = []
    argv = hps_to_argv({"epoch": 3, "sagemaker_program": "x"}, build_parser(), warnings.append)
    assert argv == []
    assert len(warnings) == 1 and "did you mean --epochs?" in warnings[0]  # sagemaker_program: no warning


def test_launcher_hyperparameters_are_skipped_silently():
    warnings: list[str] = []
    hps = {"cloudtrain_module": "trainer.task", "cloudtrain_args": "[]", "sagemaker_region": "us-east-1", "epochs": 2}
    assert hps_to_argv(hps, build_parser(), warnings.append) == ["--epochs", "2"]
    assert warnings == []


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--epochs", "0"], "--epochs must be >= 1"),
        (["--input-shape", "28x28"], "expected integers"),
        (["--input-shape", "28,28"], "height,width,channels"),
    ],
)
def test_bad_values_are_errors(argv, message):
    with pytest.raises(TrainerError, match=message):
        parse_args(argv, {})


def test_bad_choice_exits_with_usage():
    with pytest.raises(SystemExit):
        parse_args(["--precision", "float16"], {})


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, DataSpec("digits", None, "default")),
        ("MNIST", DataSpec("mnist", None, "--data")),
        ("synthetic", DataSpec("synthetic", None, "--data")),
        ("gs://b/mnist.npz", DataSpec("npz", "gs://b/mnist.npz", "--data")),
        ("s3://b/train-*.tfrecord", DataSpec("tfrecord", "s3://b/train-*.tfrecord", "--data")),
        ("/data/shards/part-0001.tfrec", DataSpec("tfrecord", "/data/shards/part-0001.tfrec", "--data")),
        ("./data", DataSpec("directory", "./data", "--data")),
    ],
)
def test_data_spec(value, expected):
    assert parse_data_spec(value) == expected


def test_platform_channel_is_used_only_without_data_flag():
    assert parse_data_spec(None, "/opt/ml/input/data/training", "SM_CHANNEL_TRAINING") == DataSpec(
        "directory", "/opt/ml/input/data/training", "SM_CHANNEL_TRAINING"
    )
    assert parse_data_spec("digits", "/opt/ml/input/data/training").kind == "digits"


def test_data_names_a_channel_by_its_sm_channel_variable():
    channels = {"TRAIN": "/gcs/b/digits/train", "MNIST": "/opt/ml/input/data/mnist"}
    assert parse_data_spec("train", channels=channels) == DataSpec(
        "directory", "/gcs/b/digits/train", "--data train (SM_CHANNEL_TRAIN)"
    )
    assert parse_data_spec("mnist", channels=channels).location == "/opt/ml/input/data/mnist"  # a channel wins
    assert parse_data_spec("digits", channels=channels).kind == "digits"
    with pytest.raises(TrainerError, match=r"nor a data channel \(channels here: mnist, train\)"):
        parse_data_spec("valid", channels=channels)


@pytest.mark.parametrize("value, message", [("digitz", "neither a dataset name"), ("hdfs://x/y", "only local")])
def test_bad_data_spec(value, message):
    with pytest.raises(TrainerError, match=message):
        parse_data_spec(value)


def test_event_lines_round_trip_and_never_hold_nan():
    line = events.format_event("epoch", epoch=1, loss=float("nan"), nested={"x": float("inf")})
    assert line.startswith(events.PREFIX)
    assert events.parse_events("log line\n" + line + "\nmore") == [
        {"event": "epoch", "epoch": 1, "loss": None, "nested": {"x": None}}
    ]
