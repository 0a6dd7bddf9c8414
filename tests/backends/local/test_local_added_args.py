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


SAGEMAKER = """\
name: strict-script
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://my-bucket
machine: {type: ml.m5.xlarge}
package: {path: code, script: train.py}
hyperparameters: {epochs: 1}
"""


@pytest.mark.slow
@pytest.mark.tf
def test_a_local_run_of_a_strict_script_names_model_dir_false_and_runs_with_it(tmp_path, monkeypatch, capsys):
    """A script written for Vertex AI (strict argparse, no --model_dir) under SageMaker's contract, for real."""
    from cloudtrain.cli import main

    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text(STRICT)
    (tmp_path / "job.yaml").write_text(SAGEMAKER)
    monkeypatch.chdir(tmp_path)
    assert main(["submit", "job.yaml", "--local", "--set", f"output_dir={tmp_path / 'a'}"]) == 1
    err = capsys.readouterr().err
    assert "exited with code 2; the script's argparse does not take --model_dir" in err
    assert "set model_dir: false in the config" in err
    assert (
        main(["submit", "job.yaml", "--local", "--set", "model_dir=false", "--set", f"output_dir={tmp_path / 'b'}"])
        == 0
    )
