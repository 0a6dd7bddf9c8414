"""One SageMaker script, one config: the SageMaker and Vertex requests it gives, checked by each cloud's own library."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest

from cloudtrain.config.load import load_config
from cloudtrain.packaging import build_script_sdist
from cloudtrain.spec import build_spec
from tests.packaging.sdist_helpers import member_bytes

FIXTURE = Path(__file__).resolve().parents[1] / "packages" / "sm_script"

# The script part is the same for both clouds; only where it runs differs.
SCRIPT = """\
package: {path: sm_script, script: mnist-2.py}
hyperparameters: {epochs: 2, batch_size: 16, learning_rate: 0.05, optimizer: adam}
image: {tensorflow: "2.16"}
"""
CLOUDS = {
    "sagemaker": """\
name: mnist-script
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://my-bucket
machine: {type: ml.g4dn.12xlarge}
data: {training: s3://my-bucket/mnist/}
""",
    "vertex": """\
name: mnist-script
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
machine: {type: n1-standard-16, accelerator: NVIDIA_TESLA_T4, accelerator_count: 4}
data: {training: gs://my-bucket/mnist/}
""",
}


def render(tmp_path: Path, cloud: str, extra: str = ""):
    if not (tmp_path / "sm_script").exists():
        shutil.copytree(FIXTURE, tmp_path / "sm_script")
    path = tmp_path / f"{cloud}.yaml"
    path.write_text(CLOUDS[cloud] + SCRIPT + extra)
    spec = build_spec(load_config(path))
    assert spec.package.script is not None
    package = build_script_sdist(spec.package.path, tmp_path / "dist", spec.package.script)
    from cloudtrain.backends import get_backend

    return spec, package, get_backend(cloud).render(spec, package)


@pytest.mark.parametrize("extra", ["", "model_dir: false\nreplica_count: 2\n"])
def test_sagemaker_runs_the_script_itself_and_botocore_accepts_the_request(tmp_path, extra):
    from botocore.validate import validate_parameters

    from tests.backends.sagemaker.test_sagemaker_request import _input_shape, _strict

    spec, package, params = render(tmp_path, "sagemaker", extra)
    validate_parameters(params, _input_shape())
    assert _strict(_input_shape(), params) == []
    hps = {k: json.loads(v) for k, v in params["HyperParameters"].items()}
    assert hps["sagemaker_program"] == "mnist-2.py"
    assert hps["sagemaker_submit_directory"].endswith(f"/{package.sha256}/sourcedir.tar.gz")
    assert not any(k.startswith("cloudtrain_") for k in hps)
    user = {k: v for k, v in hps.items() if not k.startswith("sagemaker_")}
    expected = {"epochs": 2, "batch_size": 16, "learning_rate": 0.05, "optimizer": "adam"}
    if extra:
        assert user == expected and hps["sagemaker_multi_worker_mirrored_strategy_enabled"] is True
    else:  # as the SDK's TensorFlow estimator: <output_path>/<job name>/model
        assert user == {**expected, "model_dir": f"{spec.output_dir}/{spec.job_name}/model"}
    assert params["InputDataConfig"][0]["ChannelName"] == "training"


def test_the_sagemaker_source_dir_is_the_folder_itself(tmp_path):
    from cloudtrain.backends.sagemaker.sourcedir import write_sourcedir

    (tmp_path / "sm_script").mkdir(parents=True)
    shutil.copytree(FIXTURE, tmp_path / "sm_script", dirs_exist_ok=True)
    (tmp_path / "sm_script" / "requirements.txt").write_text("pandas\n")
    (tmp_path / "sm_script" / "lib").mkdir()
    (tmp_path / "sm_script" / "lib" / "util.py").write_text("")
    _, package, _ = render(tmp_path, "sagemaker")
    first = write_sourcedir(package, tmp_path / "a.tar.gz", script=True)
    second = write_sourcedir(package, tmp_path / "b.tar.gz", script=True)
    assert first.sha256 == second.sha256
    with tarfile.open(first.path) as tar:
        files = sorted(m.name for m in tar.getmembers() if m.isfile())
        assert member_bytes(tar, "mnist-2.py") == (FIXTURE / "mnist-2.py").read_bytes()
    # The container installs requirements.txt itself, as for any SageMaker script.
    assert files == ["lib/util.py", "mnist-2.py", "requirements.txt"]


@pytest.mark.parametrize("extra", ["", "model_dir: true\nreplica_count: 3\n"])
def test_vertex_runs_the_launcher_and_aiplatform_v1_accepts_the_request(tmp_path, extra):
    """Vertex AI passes a script only its args: --model_dir only when the config asks (model_dir: true)."""
    from google.cloud.aiplatform_v1.types import CustomJob
    from google.protobuf import json_format

    spec, package, body = render(tmp_path, "vertex", extra)
    message = json_format.ParseDict(body, CustomJob.pb(CustomJob()), ignore_unknown_fields=False)
    assert json_format.MessageToDict(message) == body
    pools = body["jobSpec"]["workerPoolSpecs"]
    assert len(pools) == (2 if extra else 1)
    python = pools[0]["pythonPackageSpec"]
    assert python["pythonModule"] == "cloudtrain_script"
    assert python["packageUris"][0].endswith(package.filename)
    args = ["--batch_size", "16", "--epochs", "2", "--learning_rate", "0.05"]
    model = ["--model_dir", f"{spec.output_dir}/model/"] if extra else []  # AIP_MODEL_DIR
    assert python["args"] == args + model + ["--optimizer", "adam"]
    assert {e["name"]: e["value"] for e in python["env"]} == {
        "SM_CHANNEL_TRAINING": "/gcs/my-bucket/mnist",
        "SM_NUM_GPUS": "4",
    }


def test_both_clouds_pass_the_same_arguments_but_model_dir(tmp_path):
    sm_spec, _, sm = render(tmp_path, "sagemaker")
    vx_spec, _, vx = render(tmp_path, "vertex", "model_dir: true\n")
    from sagemaker_training import mapping

    decoded = {k: json.loads(v) for k, v in sm["HyperParameters"].items() if not k.startswith("sagemaker_")}
    sm_args = mapping.to_cmd_args(decoded)  # what the SageMaker container passes the script
    vx_args = vx["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]["args"]
    at = sm_args.index("--model_dir") + 1
    assert sm_args[:at] + sm_args[at + 1 :] == vx_args[:at] + vx_args[at + 1 :]
    assert sm_args[at].startswith("s3://") and vx_args[at].startswith("gs://")


@pytest.mark.parametrize(
    ("cloud", "extra", "passed"),
    [("sagemaker", "", True), ("vertex", "", False), ("vertex", "model_dir: true\n", True)]
    + [("sagemaker", "model_dir: false\n", False)],
)
def test_model_dir_is_passed_where_the_clouds_own_sdk_passes_it_or_the_config_asks(tmp_path, cloud, extra, passed):
    spec, _, _ = render(tmp_path, cloud, extra)
    assert spec.model_dir is passed
    assert ("--model_dir" in spec.script_args("M")) is passed
    moved = tmp_path / "moved.yaml"  # a SageMaker-born config moved to Vertex AI: Vertex AI's rule
    moved.write_text(CLOUDS["sagemaker"] + SCRIPT + extra)
    on_vertex = build_spec(
        load_config(moved, ["backend=vertex", "project=p", "staging_bucket=gs://b", "data.training=gs://b/d/"])
    )
    assert on_vertex.model_dir is (extra == "model_dir: true\n")
