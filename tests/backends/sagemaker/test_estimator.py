"""``cloudtrain init --from-estimator``: three estimators as users write them, read with ast, never run."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

from cloudtrain.backends.sagemaker.estimator import PLACEHOLDER_BUCKET, PLACEHOLDER_ROLE, translate_estimator
from cloudtrain.cli import main
from cloudtrain.config import load_config
from cloudtrain.errors import ConfigError
from cloudtrain.spec import build_spec

FIXTURE = Path(__file__).resolve().parents[2] / "packages" / "sm_script"

# The SDK's own MNIST example: role and bucket from the session, a dict of channels.
NOTEBOOK = """
import sagemaker
from sagemaker.tensorflow import TensorFlow

role = sagemaker.get_execution_role()
bucket = sagemaker.Session().default_bucket()

mnist_estimator = TensorFlow(
    entry_point="mnist-2.py",
    source_dir="code",
    role=role,
    instance_count=2,
    instance_type="ml.p3.2xlarge",
    framework_version="2.14",
    py_version="py310",
    hyperparameters={"epochs": 10, "batch_size": 64, "learning_rate": 1e-3},
    distribution={"multi_worker_mirrored_strategy": {"enabled": True}},
)
mnist_estimator.fit({"training": "s3://my-data/mnist/train", "test": f"s3://{bucket}/test"})
"""

# Everything literal, names bound to literals, no source_dir (the entry point's folder is it).
SCRIPTED = """
import boto3, sagemaker
from sagemaker.inputs import TrainingInput
from sagemaker.tensorflow import TensorFlow

session = sagemaker.Session(boto3.Session(region_name="eu-west-1"))
ROLE = "arn:aws:iam::123456789012:role/service-role/SageMakerRole"
HPS = {"epochs": 3, "optimizer": "adam", "augment": False}

est = TensorFlow(
    entry_point="code/mnist-2.py",
    role=ROLE,
    instance_count=1,
    instance_type="ml.g4dn.xlarge",
    framework_version="2.16",
    py_version="py310",
    hyperparameters=HPS,
    model_dir=False,
    output_path="s3://ml-team-bucket/jobs",
    base_job_name="MNIST_Keras",
    use_spot_instances=True,
    max_run=24 * 60 * 60,
    max_wait=2 * 24 * 60 * 60,
    volume_size=50,
    environment={"TF_CPP_MIN_LOG_LEVEL": "2"},
    tags=[{"Key": "team", "Value": "vision"}],
    sagemaker_session=session,
)
est.fit(inputs={"training": TrainingInput("s3://ml-team-bucket/mnist/train", distribution="ShardedByS3Key"),
                "eval": "s3://ml-team-bucket/mnist/eval"}, wait=False)
"""

# A TF1-era parameter-server job with things cloudtrain does not do.
LEGACY = """
import sagemaker.tensorflow

kwargs = dict(debugger_hook_config=False)
ps = sagemaker.tensorflow.TensorFlow(
    entry_point="mnist-2.py",
    source_dir="code",
    role="SageMakerRole",
    instance_count=2,
    instance_type="ml.c5.2xlarge",
    framework_version="2.11",
    py_version="py39",
    distribution={"parameter_server": {"enabled": True}},
    checkpoint_s3_uri="s3://legacy-bucket/ckpt",
    hyperparameters={"layers": [64, 32], "steps": 100},
    **kwargs,
)
ps.fit(sagemaker.inputs.TrainingInput("s3://legacy-bucket/train", input_mode="Pipe"))
"""


@pytest.fixture
def folder(tmp_path):
    shutil.copytree(FIXTURE, tmp_path / "code")
    return tmp_path


def test_the_sdk_notebook_translates_and_names_what_is_computed(folder):
    out = translate_estimator(NOTEBOOK, "notebook.py")
    cfg = out.config
    assert cfg["package"] == {"path": "code", "script": "mnist-2.py"}
    assert (cfg["replica_count"], cfg["machine"], cfg["image"]) == (
        2,
        {"type": "ml.p3.2xlarge"},
        {"tensorflow": "2.14", "python": "3.10"},
    )
    assert cfg["hyperparameters"] == {"epochs": 10, "batch_size": 64, "learning_rate": 0.001}
    assert cfg["distribution"] == {"multi_worker_mirrored_strategy": {"enabled": True}}
    assert cfg["data"] == {"training": "s3://my-data/mnist/train"}
    assert cfg["role_arn"] == PLACEHOLDER_ROLE
    fill = "\n".join(out.fill_in)
    assert "role=role (line 11)" in fill and "'test'" in fill and "region" in fill and "staging_bucket" in fill
    spec = _load(folder, out, role_arn="arn:aws:iam::123456789012:role/R", staging_bucket="s3://my-bucket")
    assert spec.image_uri.endswith("tensorflow-training:2.14-gpu-py310")  # what the SDK retrieves (see below)


def test_a_fully_literal_estimator_needs_nothing_filled_in(folder):
    out = translate_estimator(SCRIPTED, "job.py")
    assert out.fill_in == []
    cfg = out.config
    assert cfg["name"] == "mnist-keras" and cfg["region"] == "eu-west-1"
    assert cfg["role_arn"] == "arn:aws:iam::123456789012:role/service-role/SageMakerRole"
    assert cfg["staging_bucket"] == "s3://ml-team-bucket" and cfg["output_dir"] == "s3://ml-team-bucket/jobs"
    assert cfg["package"] == {"path": "code", "script": "mnist-2.py"}
    assert cfg["model_dir"] is False and cfg["hyperparameters"] == {"epochs": 3, "optimizer": "adam", "augment": False}
    assert cfg["spot"] == {"enabled": True, "max_wait": 172800} and cfg["max_runtime"] == 86400
    assert cfg["machine"] == {"type": "ml.g4dn.xlarge", "disk_gb": 50}
    assert cfg["env"] == {"TF_CPP_MIN_LOG_LEVEL": "2"} and cfg["labels"] == {"team": "vision"}
    assert cfg["data"] == {
        "training": {"source": "s3://ml-team-bucket/mnist/train", "distribution": "ShardedByS3Key"},
        "eval": "s3://ml-team-bucket/mnist/eval",
    }
    assert out.not_translated == [
        "sagemaker_session: the region and credentials come from the config and the usual AWS settings"
    ]
    spec = _load(folder, out)
    assert spec.script_args("M") == ("--augment", "False", "--epochs", "3", "--optimizer", "adam")


def test_what_cloudtrain_does_not_run_is_listed_and_refused_on_load(folder):
    out = translate_estimator(LEGACY, "ps.py")
    fill = "\n".join(out.fill_in)
    assert "TensorFlow(**…)" in fill and "role='SageMakerRole' is a role name" in fill
    assert "hyperparameters.layers" in fill and out.config["hyperparameters"] == {"steps": 100}
    left = "\n".join(out.not_translated)
    assert "checkpoint_s3_uri" in left and "Pipe" in left
    assert out.config["data"] == {"training": "s3://legacy-bucket/train"}
    with pytest.raises(ConfigError) as info:
        _load(folder, out)
    fields = [e.field for e in getattr(info.value, "errors", (info.value,))]
    assert "role_arn" in fields and "distribution.parameter_server" not in fields  # SageMaker runs them
    assert out.config["distribution"] == {"parameter_server": {"enabled": True}}


def test_no_estimator_or_bad_python_is_one_line():
    with pytest.raises(ConfigError, match="no TensorFlow"):
        translate_estimator("import sagemaker\n", "x.py")
    with pytest.raises(ConfigError, match="not valid Python"):
        translate_estimator("TensorFlow(\n", "x.py")


def test_cli_writes_the_config_and_lists_the_fill_ins(folder, capsys):
    source = folder / "notebook.py"
    source.write_text(textwrap.dedent(NOTEBOOK))
    target = folder / "job.yaml"
    assert main(["init", "--from-estimator", str(source), "--to", str(target)]) == 0
    err = capsys.readouterr().err
    assert "\n4 settings to fill in (listed at the top of the config):\n" in f"\n{err}" and "role=role" in err
    text = target.read_text()
    assert text.startswith("# From the TensorFlow estimator in") and "#   - role=role" in text
    capsys.readouterr()
    assert main(["validate", str(target)]) == 2  # the placeholders fail until filled in, each named
    errors = capsys.readouterr().err.splitlines()
    placeholders = [f for f, v in (("role_arn", PLACEHOLDER_ROLE), ("staging_bucket", PLACEHOLDER_BUCKET)) if v in text]
    assert placeholders and [e.split(": ")[2] for e in errors] == placeholders
    assert all("the placeholder `cloudtrain init` wrote" in e for e in errors)
    assert main(["submit", "--config", str(target), "--dry-run"]) == 2  # one rule: the dry run says the same
    assert capsys.readouterr().err.splitlines() == errors
    target.write_text(
        text.replace(PLACEHOLDER_ROLE, "arn:aws:iam::123456789012:role/R").replace(PLACEHOLDER_BUCKET, "s3://my-bucket")
    )
    assert main(["validate", str(target)]) == 0
    assert main(["init", "--from-estimator", str(source), "--to", str(target)]) == 2  # exists: no overwrite


def _load(folder: Path, translation, **filled):
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump({**translation.config, **filled}, sort_keys=False))
    return build_spec(load_config(path))


@pytest.mark.parametrize(
    ("version", "python", "gpu"), [("2.14", "py310", True), ("2.16", "py310", False), ("2.13", None, True)]
)
def test_framework_version_picks_the_image_the_sdk_picks(version, python, gpu):
    """The same TF DLC image as sagemaker's own image_uris.retrieve for the estimator's arguments."""
    retrieve = pytest.importorskip("sagemaker.core.image_uris").retrieve
    from cloudtrain import catalog

    instance = "ml.g4dn.xlarge" if gpu else "ml.c5.xlarge"
    pythons = [python] if python else ["py310"]
    sdk = retrieve(
        "tensorflow",
        region="us-east-1",
        version=version,
        py_version=pythons[0],
        instance_type=instance,
        image_scope="training",
    )
    assert catalog.training_image("sagemaker", "us-east-1", version, gpu=gpu, py_version=pythons[0]) == sdk
    assert catalog.python_tag("3.10") == "py310"  # image.python "3.10" is the SDK's py_version py310


ONE_FILL_IN = """
import sagemaker
from sagemaker.tensorflow import TensorFlow
session = sagemaker.Session(boto3.Session(region_name="eu-west-1"))
est = TensorFlow(entry_point="train.py", role=role, instance_type="ml.g4dn.xlarge", instance_count=1,
                 framework_version="2.16", py_version="py310", output_path="s3://b/out", sagemaker_session=session)
"""


def test_counts_in_the_messages_are_words_singular_and_plural(folder, capsys):
    source = folder / "one.py"
    source.write_text(ONE_FILL_IN)
    assert main(["init", "--from-estimator", str(source), "--to", str(folder / "one.yaml")]) == 0
    assert "1 setting to fill in (listed at the top of the config):" in capsys.readouterr().err.splitlines()
    call = ONE_FILL_IN.split("est = ", 1)[1]
    two = translate_estimator(ONE_FILL_IN + f"again = {call}", "two.py")
    assert two.not_translated[0] == "1 more TensorFlow(...) call after line 5: translate them one file at a time"
    three = translate_estimator(ONE_FILL_IN + f"again = {call}" + f"more = {call}", "three.py")
    assert three.not_translated[0] == "2 more TensorFlow(...) calls after line 5: translate them one file at a time"


ENTRY_ALONE = """
import sagemaker
from sagemaker.tensorflow import TensorFlow

est = TensorFlow(entry_point="mnist-2.py", role=sagemaker.get_execution_role(), instance_count=1,
                 instance_type="ml.m5.xlarge", framework_version="2.11", py_version="py39")
est.fit("s3://my-data/mnist")
"""


def test_without_source_dir_the_entry_point_is_packaged_alone_and_each_channel_named(tmp_path, capsys):
    """SageMaker uploads an entry point without source_dir alone: the notebook and its data stay out."""
    from cloudtrain.packaging.tree import collect

    notebook = tmp_path / "notebook"
    (notebook / "data").mkdir(parents=True)
    (notebook / "data" / "train.npy").write_bytes(b"\0" * 64)
    (notebook / "mnist-2.py").write_text("print('training')\n")
    (notebook / "launch.py").write_text(ENTRY_ALONE)
    target = tmp_path / "configs" / "job.yaml"
    target.parent.mkdir()
    assert main(["init", "--from-estimator", str(notebook / "launch.py"), "--to", str(target)]) == 0
    err = capsys.readouterr().err
    assert "data.training: fit input 's3://my-data/mnist' (line 7) is the training channel (SM_CHANNEL_TRAINING)" in err
    text = target.read_text()
    assert "#   - data.training: fit input 's3://my-data/mnist' (line 7) is the training channel" in text
    assert "is packaged alone, as SageMaker uploads it" in text
    assert yaml.safe_load(text)["package"] == {"path": "../notebook", "script": "mnist-2.py"}
    assert [f.relpath for f in collect(notebook).files] == ["mnist-2.py"]
    (notebook / ".cloudtrainignore").write_text("data/\n")  # the user's own is kept, and said so
    assert main(["init", "--from-estimator", str(notebook / "launch.py"), "--to", str(target), "--force"]) == 0
    assert "exists: SageMaker uploads mnist-2.py alone" in capsys.readouterr().err
    assert (notebook / ".cloudtrainignore").read_text() == "data/\n"
