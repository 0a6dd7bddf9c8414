"""The sweep: key and ML Engine's hyperparameters block: typed, validated offline, one line per problem."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from cloudtrain.cli import main
from cloudtrain.config.load import load_config
from cloudtrain.config.schema import Sweep
from cloudtrain.errors import ConfigError
from cloudtrain.sweeps.params import resolve

ROOT = Path(__file__).resolve().parents[2]
BASE = f"""
name: sw
backend: vertex
region: us-central1
project: p
staging_bucket: gs://b
machine: {{type: n1-standard-4}}
package: {{path: {ROOT / "trainer"}, module: trainer.task}}
"""


def _write(tmp_path: Path, sweep: str, base: str = BASE) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(base + textwrap.dedent(sweep))
    return path


def sweep_of(path: Path) -> Sweep:
    sweep = load_config(path).config.sweep
    assert sweep is not None, f"{path} has no sweep"
    return sweep


def test_the_issue_form_loads_and_types_are_inferred() -> None:
    sweep = sweep_of(ROOT / "job_configs" / "sweep.yaml")
    params = {p.name: p for p in resolve(sweep.params)}
    assert params["lr"].kind == "double" and params["lr"].scale == "log" and params["lr"].min == 0.0001
    assert params["batch-size"].kind == "discrete" and params["batch-size"].values == (32, 64, 128)
    assert params["optimizer"].kind == "categorical" and params["optimizer"].values == ("adam", "sgd")
    assert (sweep.metric, sweep.goal, sweep.max_trials, sweep.parallel_trials, sweep.algorithm) == (
        "val_accuracy",
        "maximize",
        8,
        2,
        "bayesian",
    )


def test_integer_range_and_explicit_type(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        sweep:
          metric: loss
          goal: minimize
          params:
            layers: {min: 1, max: 4}
            width: {type: double, min: 1, max: 4}
            seed: {type: categorical, values: [1, 2]}
        """,
    )
    params = {p.name: p for p in resolve(sweep_of(path).params)}
    assert params["layers"].kind == "integer" and params["layers"].grid_values() == (1, 2, 3, 4)
    assert params["width"].kind == "double" and params["width"].min == 1.0
    assert params["seed"].kind == "categorical" and params["seed"].values == ("1", "2")


@pytest.mark.parametrize(
    ("sweep", "line", "message"),
    [
        ("params: {lr: {min: 0, max: 1, scale: log}}", 11, "sweep.params.lr.min: a log scale needs min > 0"),
        ("params: {lr: {min: 1.0, max: 0.5}}", 11, "sweep.params.lr.max: max (0.5) must be greater than min"),
        ("params: {lr: {min: 0.1}}", 11, "sweep.params.lr.max: a double range needs min and max"),
        ("params: {lr: {min: 0.1, max: 1.0, values: [1]}}", 11, "give either {min, max} or values"),
        ("params: {opt: {values: []}}", 11, "sweep.params.opt.values: a categorical parameter needs a non-empty"),
        ("params: {opt: {values: [a, a]}}", 11, "values repeat"),
        ("params: {n: {type: integer, min: 1.5, max: 3}}", 11, "an integer range needs integer bounds"),
        ("params: {opt: {values: [a, b], scale: log}}", 11, "sweep.params.opt.scale: scale applies to {min, max}"),
        ("algorithm: grid\n  params: {lr: {min: 0.1, max: 1.0}}", 12, "a grid cannot enumerate a continuous range"),
        ("parallel_trials: 9\n  params: {lr: {min: 0.1, max: 1.0}}", 11, "sweep.parallel_trials: received 9, more"),
        ("params: {lr: {mn: 0.1, max: 1.0}}", 11, "unknown key 'mn' — did you mean 'min'?"),
        ("algorithm: hyperband\n  params: {lr: {min: 0.1, max: 1.0}}", 11, "sweep.algorithm: received 'hyperband'"),
    ],
)
def test_each_mistake_is_one_line_naming_file_line_and_field(tmp_path: Path, capsys, sweep, line, message) -> None:
    path = _write(tmp_path, f"sweep:\n  metric: val_accuracy\n  {sweep}\n")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}:{line}:" in err and message in err


def test_a_tuned_parameter_cannot_also_be_fixed(tmp_path: Path) -> None:
    path = _write(tmp_path, "hyperparameters: {lr: 0.1}\nsweep:\n  metric: m\n  params: {lr: {min: 0.01, max: 1.0}}\n")
    with pytest.raises(ConfigError, match="'lr' is both fixed here and tuned"):
        load_config(path)


def test_sagemaker_limits_are_checked_offline(tmp_path: Path) -> None:
    base = (
        BASE.replace("backend: vertex", "backend: sagemaker")
        .replace("us-central1", "us-east-1")
        .replace("project: p", "role_arn: arn:aws:iam::123456789012:role/R")
        .replace("gs://b", "s3://b")
        .replace("n1-standard-4", "ml.m5.xlarge")
    )
    values = ", ".join(f"v{i}" for i in range(31))
    path = _write(tmp_path, f"sweep:\n  metric: m\n  params: {{opt: {{values: [{values}]}}}}\n", base)
    with pytest.raises(ConfigError, match="31 values; SageMaker allows 30"):
        load_config(path)


LEGACY = """\
trainingInput:
  scaleTier: BASIC
  region: us-central1
  hyperparameters:
    goal: MAXIMIZE
    hyperparameterMetricTag: val_accuracy
    maxTrials: 6
    maxParallelTrials: 2
    enableTrialEarlyStopping: true
    algorithm: RANDOM_SEARCH
    params:
      - parameterName: lr
        type: DOUBLE
        minValue: 0.0001
        maxValue: 0.1
        scaleType: UNIT_LOG_SCALE
      - parameterName: layers
        type: INTEGER
        minValue: 1
        maxValue: 4
        scaleType: UNIT_LINEAR_SCALE
      - parameterName: batch-size
        type: DISCRETE
        discreteValues: [32, 64]
      - parameter_name: optimizer
        type: CATEGORICAL
        categorical_values: [adam, sgd]
"""


def test_the_legacy_hyperparameters_block_maps_key_for_key(tmp_path: Path) -> None:
    path = tmp_path / "config_hptuning.yaml"
    path.write_text(f"project: p\nstaging_bucket: gs://b\npackage: {{path: {ROOT / 'trainer'}}}\n" + LEGACY)
    sweep = sweep_of(path)
    assert sweep.model_dump(exclude_none=True) == {
        "metric": "val_accuracy",
        "goal": "maximize",
        "max_trials": 6,
        "parallel_trials": 2,
        "algorithm": "random",
        "early_stopping": True,
        "params": {
            "lr": {"type": "double", "min": 0.0001, "max": 0.1, "scale": "log"},
            "layers": {"type": "integer", "min": 1, "max": 4, "scale": "linear"},
            "batch-size": {"type": "discrete", "values": [32, 64], "scale": "linear"},
            "optimizer": {"type": "categorical", "values": ["adam", "sgd"], "scale": "linear"},
        },
    }


def test_legacy_defaults_and_refusals(tmp_path: Path) -> None:
    path = tmp_path / "cfg.yaml"
    minimal = LEGACY.replace("    hyperparameterMetricTag: val_accuracy\n", "").replace(
        "    algorithm: RANDOM_SEARCH\n", ""
    )
    path.write_text(f"project: p\nstaging_bucket: gs://b\npackage: {{path: {ROOT / 'trainer'}}}\n" + minimal)
    sweep = sweep_of(path)
    assert sweep.metric == "training/hptuning/metric" and sweep.algorithm == "bayesian"
    path.write_text(path.read_text().replace("goal: MAXIMIZE", "goal: MAXIMUM"))
    with pytest.raises(ConfigError, match=r"cfg.yaml:7: trainingInput.hyperparameters: hyperparameters.goal must be"):
        load_config(path)
    path.write_text(path.read_text().replace("goal: MAXIMUM", "goal: MAXIMIZE\n    resumePreviousJobId: old"))
    with pytest.raises(ConfigError, match="resumePreviousJobId has no equivalent"):
        load_config(path)
