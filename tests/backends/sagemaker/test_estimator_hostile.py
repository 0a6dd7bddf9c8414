"""`init --from-estimator` on a launch script from someone else: it returns promptly, never hangs on what it
reads, and writes no value that becomes something else (a key through a newline, a path out of the folder)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from cloudtrain.backends.sagemaker.estimator import MAX_ESTIMATOR_BYTES, to_yaml, translate_estimator
from tests.conftest import REPO

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"


def estimator(**arguments: str) -> str:
    given = {"entry_point": '"train.py"', "role": f'"{ROLE}"', "instance_type": '"ml.m5.xlarge"', **arguments}
    lines = ",\n    ".join(f"{k}={v}" for k, v in given.items())
    return f"from sagemaker.tensorflow import TensorFlow\nest = TensorFlow(\n    {lines},\n)\n"


def written(source: str, name: str = "launch.py") -> tuple[dict, str]:
    text = to_yaml(translate_estimator(source, name), name)
    return yaml.safe_load(text), text


def init(tmp_path: Path, path: Path, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cloudtrain", "init", "--from-estimator", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_a_fifo_is_refused_unread_in_one_line(tmp_path):
    fifo = tmp_path / "launch.py"
    os.mkfifo(fifo)
    done = init(tmp_path, fifo)  # a plain read would wait for a writer forever (the timeout would fire)
    assert done.returncode == 2 and done.stderr.startswith(f"error: cannot read '{fifo}': is a FIFO")
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_file_past_the_limit_is_refused(tmp_path):
    big = tmp_path / "launch.py"
    big.write_text(estimator() + "#" * MAX_ESTIMATOR_BYTES)
    done = init(tmp_path, big)
    assert done.returncode == 2 and "limit" in done.stderr and "Traceback" not in done.stderr


def test_repeated_squaring_is_not_computed(tmp_path):
    """Each name is the square of the one before: 40 steps would be a number of 2**40 digits."""
    chain = "n0 = 99999999999\n" + "".join(f"n{i + 1} = n{i} * n{i}\n" for i in range(40))
    path = tmp_path / "launch.py"
    path.write_text(chain + estimator(max_run="n40"))
    done = init(tmp_path, path)  # returns at once (the timeout is the test's only clock)
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load(done.stdout)
    assert "max_runtime" not in config
    assert "max_run=n40 (line" in done.stderr and "set max_runtime yourself" in done.stderr
    config, _text = written("est = TensorFlow(entry_point='t.py', max_run=24 * 60 * 60)")
    assert config["max_runtime"] == 86400  # a real product still reads


@pytest.mark.parametrize(
    "source",
    [
        "x = " + "[" * 5000 + "]" * 5000 + "\n",  # nesting past the parser
        "x = 1\0\n",  # a NUL byte
    ],
)
def test_what_python_cannot_parse_is_one_line(tmp_path, source):
    path = tmp_path / "launch.py"
    path.write_text(source + estimator())
    done = init(tmp_path, path)
    assert done.returncode == 2 and done.stderr.startswith("error: ") and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("arguments", "key", "expected"),
    [
        ({"source_dir": '"/etc"'}, ("package", "path"), "."),
        ({"source_dir": '"../../home"'}, ("package", "path"), "."),
        ({"entry_point": '"../../outside.py"'}, ("package", "path"), "."),
        ({"entry_point": '"train.py; rm -rf ~"', "source_dir": '"code"'}, ("package", "script"), "train.py"),
        ({"entry_point": '"$(curl evil).py"', "source_dir": '"code"'}, ("package", "script"), "train.py"),
    ],
)
def test_paths_stay_inside_the_estimators_folder(arguments, key, expected):
    config, text = written(estimator(**arguments))
    assert config[key[0]][key[1]] == expected
    assert f"{key[0]}.{key[1]}: " in text  # and the line that says so, at the top


def test_a_newline_in_a_value_or_a_file_name_adds_no_key():
    source = estimator(
        base_job_name='"job\\nbackend: slurm"',
        environment='{"A": "1\\nstaging_bucket: s3://attacker"}',
        hyperparameters='{"lr": "0.1\\rbackend: local"}',
    ).replace("from sagemaker", "region_name = 'us-east-1\\nbackend: slurm'\nfrom sagemaker")
    config, text = written(source, "launch\nbackend: slurm.py")
    assert config["backend"] == "sagemaker"
    assert set(config) <= {"name", "backend", "region", "role_arn", "staging_bucket", "machine", "package"}
    assert "env" not in config and "hyperparameters" not in config
    assert config["name"] == "job-backend-slurm"  # a job name keeps only what names allow
    assert config["staging_bucket"].startswith("s3://") and "attacker" not in config["staging_bucket"]
    assert all(line.startswith("#") for line in text.split("\nname:")[0].splitlines())


@pytest.mark.parametrize(
    ("fit", "line"),
    [
        ("est.fit(data_uri)", "it is the training channel; add it as data.training: s3://…"),
        ("est.fit({'validation': uri()})", "it is the validation channel; add it as data.validation: s3://…"),
    ],
)
def test_a_computed_fit_input_names_its_channel(fit, line):
    translation = translate_estimator(estimator() + textwrap.dedent(fit) + "\n")
    assert any(item.endswith(line) for item in translation.fill_in), translation.fill_in
