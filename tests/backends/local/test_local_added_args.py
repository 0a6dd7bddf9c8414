"""A strict argparse script refusing the --model_dir cloudtrain passed gets one line naming model_dir: false
(a rule of catalog/data/failure_hints.json, read by backends/local/diagnose.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cloudtrain.backends.local.diagnose import failure_hint

STRICT = "import argparse\np = argparse.ArgumentParser()\np.add_argument('--epochs', type=int)\np.parse_args()\n"


def run(tmp_path, *args: str) -> tuple[str, int]:
    script = tmp_path / "train.py"
    script.write_text(STRICT)
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
    return "step 1\n" + done.stderr, done.returncode


def test_a_refused_model_dir_names_the_setting_that_removes_it(tmp_path):
    log, code = run(tmp_path, "--epochs", "1", "--model_dir", "/runs/j/model")
    assert code == 2
    hint = added_args_hint(log, code, passed_model_dir=True)
    assert hint is not None and "set model_dir: false" in hint and "--model_dir" in hint
    log, code = run(tmp_path, "--epochs", "1", "--model_dir=s3://b/j/model")
    assert added_args_hint(log, code, passed_model_dir=True) == hint


@pytest.mark.parametrize(
    ("args", "passed"),
    [
        (("--epochs", "1", "--lr", "0.1"), True),  # the user's own argument: not cloudtrain's to explain
        (("--epochs", "1", "--model_dir", "/m"), False),  # the config passed it itself (hyperparameters)
        (("--epochs", "x"), True),  # exit 2 for another reason
    ],
)
def test_other_failures_get_no_model_dir_line(tmp_path, args, passed):
    log, code = run(tmp_path, *args)
    assert code == 2
    assert added_args_hint(log, code, passed_model_dir=passed) is None


def test_exit_codes_other_than_argparses_get_none():
    log = "train.py: error: unrecognized arguments: --model_dir /m\n"
    assert added_args_hint(log, 1, passed_model_dir=True) is None
    assert added_args_hint(log, 2, passed_model_dir=True) is not None


def added_args_hint(log: str, code: int | None, *, passed_model_dir: bool) -> str | None:
    return failure_hint(log, "2.17", "sagemaker", {}, code, passed_model_dir=passed_model_dir)
