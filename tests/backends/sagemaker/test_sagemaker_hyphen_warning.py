"""A hyperparameter whose SM_HP_* name the SageMaker TF images' /bin/sh drops: one warning at submit."""

from __future__ import annotations

import json

from cloudtrain.cli import main

CONFIG = """\
name: probe
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://my-bucket
machine: {type: ml.c5.xlarge}
package: {path: src, script: train.py}
hyperparameters: {epochs: 2, learning-rate: 0.05, batch_size: 16}
"""
WARNING = (
    "warning: hyperparameters: 'learning-rate': SageMaker's TensorFlow containers drop SM_HP_LEARNING-RATE "
    "(their /bin/sh passes no variable whose name has '-'); rename it 'learning_rate', or read SM_HPS or "
    "the --learning-rate argument"
)


def _config(tmp_path, text=CONFIG):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("import os\nprint(os.environ['SM_HP_EPOCHS'])\n")
    path = tmp_path / "job.yaml"
    path.write_text(text)
    return path


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if "SM_HP_" in line]


def test_dry_run_warns_once_naming_the_hyperparameter_and_the_fix(tmp_path, capsys):
    assert main(["submit", "--config", str(_config(tmp_path)), "--dry-run"]) == 0
    assert _warnings(capsys.readouterr().err) == [WARNING]


def test_json_dry_run_warns_on_stderr_and_keeps_stdout_json(tmp_path, capsys):
    assert main(["submit", "--config", str(_config(tmp_path)), "--dry-run", "-o", "json"]) == 0
    captured = capsys.readouterr()
    assert _warnings(captured.err) == [WARNING]
    assert json.loads(captured.out)["request"]["HyperParameters"]["learning-rate"] == "0.05"


def test_local_dry_run_under_the_sagemaker_contract_warns_too(tmp_path, capsys):
    assert main(["submit", "--config", str(_config(tmp_path)), "--dry-run", "--local"]) == 0
    assert _warnings(capsys.readouterr().err) == [WARNING]


def test_names_a_shell_passes_on_get_no_warning(tmp_path, capsys):
    assert (
        main(
            [
                "submit",
                "--config",
                str(_config(tmp_path, CONFIG.replace("learning-rate", "learning_rate"))),
                "--dry-run",
            ]
        )
        == 0
    )
    assert _warnings(capsys.readouterr().err) == []


def test_vertex_sets_no_sm_hp_variables_and_does_not_warn(tmp_path, capsys):
    vertex = CONFIG.replace("backend: sagemaker", "backend: vertex").replace("region: us-east-1", "region: us-central1")
    vertex = vertex.replace("role_arn: arn:aws:iam::123456789012:role/SageMakerRole", "project: my-project")
    vertex = vertex.replace("s3://my-bucket", "gs://my-bucket").replace("ml.c5.xlarge", "n1-standard-4")
    assert main(["submit", "--config", str(_config(tmp_path, vertex)), "--dry-run"]) == 0
    assert _warnings(capsys.readouterr().err) == []
