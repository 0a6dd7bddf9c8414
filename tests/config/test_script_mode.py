"""``package.script``, ``model_dir`` and ``distribution``: what a SageMaker script job may say, and the argv it gets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cloudtrain.config import load_config
from cloudtrain.config.script_mode import script_cmd_args
from cloudtrain.errors import ConfigError
from cloudtrain.spec import build_spec

FIXTURE = Path(__file__).resolve().parents[1] / "packages" / "sm_script"

SAGEMAKER = """\
name: mnist-script
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://my-bucket
machine: {type: ml.g4dn.xlarge}
package: {path: sm_script, script: mnist-2.py}
hyperparameters: {epochs: 2, learning_rate: 0.05}
"""


@pytest.fixture
def write(tmp_path):
    shutil.copytree(FIXTURE, tmp_path / "sm_script")

    def write(text: str) -> Path:
        path = tmp_path / "job.yaml"
        path.write_text(text)
        return path

    return write


def error_of(path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value


def test_a_script_job_resolves_with_the_source_folder_and_the_script(write, tmp_path):
    spec = build_spec(load_config(write(SAGEMAKER)))
    assert spec.package.script == "mnist-2.py" and spec.package.path == (tmp_path / "sm_script").resolve()
    assert spec.model_dir is True
    assert spec.script_args("s3://b/m") == ("--epochs", "2", "--learning_rate", "0.05", "--model_dir", "s3://b/m")


def test_model_dir_false_passes_no_model_dir(write):
    spec = build_spec(load_config(write(SAGEMAKER + "model_dir: false\n")))
    assert spec.script_args("s3://b/m") == ("--epochs", "2", "--learning_rate", "0.05")


@pytest.mark.parametrize(
    ("extra", "field", "words"),
    [
        ("distribution: {mpi: {enabled: true}}\n", "distribution.mpi", "Horovod"),
        ("args: [--epochs, '3']\n", "args", "only its hyperparameters"),
        ("hyperparameters: {model_dir: /tmp/m}\n", "hyperparameters.model_dir", "passes --model_dir"),
    ],
)
def test_what_a_script_job_may_not_say_is_one_line_with_a_fix(write, extra, field, words):
    text = SAGEMAKER.replace("hyperparameters: {epochs: 2, learning_rate: 0.05}\n", "") + extra
    error = error_of(write(text))
    assert error.field == field and words in error.message, error
    assert error.hint


PS = "replica_count: 3\ndistribution: {parameter_server: {enabled: true}}\n"


def test_parameter_servers_are_sent_as_the_estimator_sends_them(write):
    """distribution={"parameter_server": {"enabled": True}}: the SDK's sagemaker_parameter_server_enabled, no MWMS."""
    from cloudtrain.backends.sagemaker import request

    spec = build_spec(load_config(write(SAGEMAKER + PS)))
    hps = request.hyperparameters(spec, "s3://my-bucket/src.tar.gz")
    assert spec.parameter_server and hps["sagemaker_parameter_server_enabled"] == "true"
    assert "sagemaker_multi_worker_mirrored_strategy_enabled" not in hps and spec.notes == ()
    plain = request.hyperparameters(build_spec(load_config(write(SAGEMAKER + "replica_count: 3\n"))), "s3://b/s")
    assert plain["sagemaker_multi_worker_mirrored_strategy_enabled"] == "true"
    assert "sagemaker_parameter_server_enabled" not in plain


def test_parameter_servers_locally_get_the_toolkits_tf_config_and_one_line(write):
    from cloudtrain.backends.sagemaker.contract import sagemaker_tf_config

    addresses = ["127.0.0.1:41000", "127.0.0.1:41007", "127.0.0.1:41012"]
    cluster = {"master": addresses[:1], "ps": ["127.0.0.1:41001", "127.0.0.1:41008", "127.0.0.1:41013"]}
    cluster["worker"] = addresses[1:]
    assert sagemaker_tf_config(addresses, 0, ps=True) == {
        "cluster": cluster,
        "environment": "cloud",
        "task": {"index": 0, "type": "master"},
    }
    assert sagemaker_tf_config(addresses, 2, ps=True)["task"] == {"index": 1, "type": "worker"}
    local = load_config(write(SAGEMAKER.replace("backend: sagemaker", "backend: local\ntarget: sagemaker") + PS))
    (note,) = build_spec(local).notes
    assert note.startswith("mapped: distribution.parameter_server:") and "no parameter server process" in note


@pytest.mark.parametrize("backend", ["vertex", "local\ntarget: vertex"])
def test_parameter_servers_elsewhere_are_one_line_naming_what_sagemaker_does(write, backend):
    from tests.conftest import VERTEX_BASE

    text = VERTEX_BASE.replace("backend: vertex", f"backend: {backend}").split("package:")[0]
    error = error_of(write(text + "package: {path: sm_script, script: mnist-2.py}\n" + PS))
    assert error.field == "distribution.parameter_server" and "\n" not in str(error), error
    assert (
        "starts no parameter servers; SageMaker's distribution.parameter_server runs one on each host" in error.message
    )
    assert error.hint is not None and "backend: sagemaker" in error.hint


@pytest.mark.parametrize(
    ("package", "field", "words"),
    [
        ("{path: sm_script, script: mnist-2.py, module: trainer.task}", "package.module", "not both"),
        ("{path: sm_script, script: mnist_2.py}", "package.script", "not found"),
        ("{path: nowhere, script: mnist-2.py}", "package.path", "does not exist"),
        ("{path: sm_script, script: ../mnist-2.py}", "package.script", "relative path"),
    ],
)
def test_package_script_problems_point_at_the_key(write, package, field, words):
    error = error_of(write(SAGEMAKER.replace("{path: sm_script, script: mnist-2.py}", package)))
    assert error.field == field and words in error.message, error


def test_model_dir_false_on_a_module_job_is_refused(project):
    from tests.conftest import VERTEX_BASE

    error = error_of(project(VERTEX_BASE + "model_dir: false\n"))
    assert error.field == "model_dir" and "package.script" in error.message


def test_multi_worker_mirrored_strategy_is_the_replica_count_mechanism(write):
    """One mechanism: the estimator's spelling changes nothing that replica_count does not."""
    import datetime as dt

    from cloudtrain.backends.sagemaker import BACKEND
    from cloudtrain.packaging import build_script_sdist

    now, suffix = dt.datetime(2025, 1, 2, tzinfo=dt.timezone.utc), "abc123"  # one job name for both
    plain = build_spec(load_config(write(SAGEMAKER + "replica_count: 2\n")), now=now, suffix=suffix)
    spelled = build_spec(
        load_config(
            write(SAGEMAKER + "replica_count: 2\ndistribution: {multi_worker_mirrored_strategy: {enabled: true}}\n")
        ),
        now=now,
        suffix=suffix,
    )
    package = build_script_sdist(plain.package.path, Path(write("").parent / "dist"), "mnist-2.py")
    ours = [BACKEND.render(s, package)["HyperParameters"] for s in (plain, spelled)]
    assert ours[0] == ours[1]
    assert json.loads(ours[0]["sagemaker_multi_worker_mirrored_strategy_enabled"]) is True


def test_hyperparameters_reach_the_script_as_the_sagemaker_toolkit_passes_them():
    """Same order, names and value text as sagemaker-training's to_cmd_args on the decoded JSON."""
    from sagemaker_training import mapping

    hps = {"epochs": 3, "learning_rate": 1e-05, "shuffle": True, "optimizer": "adam w", "b": 0.5, "Zeta": -1}
    decoded = {k: json.loads(json.dumps(v)) for k, v in hps.items()}  # what SageMaker hands the toolkit
    assert script_cmd_args(hps) == mapping.to_cmd_args(decoded)
    assert script_cmd_args(hps) == [
        "--Zeta",
        "-1",
        "-b",
        "0.5",
        "--epochs",
        "3",
        "--learning_rate",
        "1e-05",
        "--optimizer",
        "adam w",
        "--shuffle",
        "True",
    ]


def test_image_python_is_sagemakers_py_version(write):
    spec = build_spec(load_config(write(SAGEMAKER + 'image: {tensorflow: "2.11", python: "3.9"}\n')))
    assert spec.image_uri.endswith(":2.11-gpu-py39")
    error = error_of(write(SAGEMAKER + 'image: {tensorflow: "2.16", python: "2.7"}\n'))
    assert error.field == "image.python" and "py310" in error.message
