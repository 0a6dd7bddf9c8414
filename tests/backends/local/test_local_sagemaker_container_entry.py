"""A script under ``--local`` with the SageMaker contract sees what it sees under AWS's own container entry.

The entry the SageMaker TensorFlow training images run (``sagemaker-tensorflow-training`` 20.5.0
with ``sagemaker-training`` 4.8.3, installed into ``.venv-sm-toolkit`` by ``make test`` from
tests/sm_toolkit/requirements.txt) runs a probe script over an ``/opt/ml`` tree laid out from
cloudtrain's own CreateTrainingJob request (``SAGEMAKER_BASE_DIR`` relocates ``/opt/ml``). The same
probe then runs with ``cloudtrain``'s local SageMaker contract, and what the two saw is compared
variable by variable.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cloudtrain.backends.sagemaker.request import REQUEST_HASH, create_training_job
from cloudtrain.backends.sagemaker.sourcedir import write_sourcedir
from cloudtrain.packaging import build_script_sdist

from .conftest import make_spec

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
TOOLKIT_PYTHON = ROOT / ".venv-sm-toolkit" / "bin" / "python"
PROBE = ROOT / "tests" / "packages" / "sm_probe"
REGION = "us-east-1"
HYPERPARAMETERS = {"epochs": 2, "learning-rate": 0.05, "batch_size": 16}

# What the toolkit's launcher needs that this machine is not, done inside the launcher process so
# that nothing of it reaches the script's environment:
# - the TF container's training module imports TensorFlow at its top and uses it only to start
#   parameter servers (sagemaker_parameter_server_enabled), which this job does not ask for;
# - the launcher waits until every host name (algo-1) resolves, which only the platform's DNS does.
ENTRY = """
import sys, types
sys.modules["tensorflow"] = types.ModuleType("tensorflow")
from sagemaker_training import entry_point
entry_point._wait_hostname_resolution = lambda: None
from sagemaker_training.cli.train import main
main()
"""


# Set by the platform and the image before the entry point starts (the image's ENV lines and the
# training job's own variables). The local contract sets these too.
def platform_env(job_name: str) -> dict[str, str]:
    return {
        "SAGEMAKER_TRAINING_MODULE": "sagemaker_tensorflow_container.training:main",  # the image's ENV
        "PYTHONUNBUFFERED": "1",  # the image's ENV
        "PYTHONDONTWRITEBYTECODE": "1",  # the image's ENV
        "TRAINING_JOB_NAME": job_name,
        "AWS_REGION": REGION,
        "SAGEMAKER_REGION": REGION,
        "CURRENT_HOST": "algo-1",
    }


# Variables that differ by machine, not by contract; each compared as far as it is the contract's.
EXCLUDED = {
    "PATH": "each side's own interpreter comes first (the local run's venv, the image's /usr/local/bin)",
    "VIRTUAL_ENV": "the local run's venv; the image has none",
    "PYTHONPATH": "the launcher's own sys.path after the code directory: checked, first entry only",
    "CLOUDTRAIN_PREEMPTION_GRACE_S": "local only: the bundled trainer saves at once on Ctrl-C (no cloud grace period)",
}


def _without_request_hash(env: dict[str, str]) -> dict[str, str]:
    """The request's own sha256 (``sagemaker_cloudtrain_request``: how a retried create recognises its
    job) out of the framework parameters: a local run sends no request to hash."""
    env = dict(env)
    params = json.loads(env["SM_FRAMEWORK_PARAMS"])
    params.pop(REQUEST_HASH)
    env["SM_FRAMEWORK_PARAMS"] = json.dumps(params, sort_keys=True, separators=(",", ":"))
    training_env = json.loads(env["SM_TRAINING_ENV"])
    training_env["additional_framework_parameters"].pop(REQUEST_HASH)
    env["SM_TRAINING_ENV"] = json.dumps(training_env)
    return env


def _base_env() -> dict[str, str]:
    """What both sides start from: the same few variables of this shell."""
    return {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}


def _normalize(value, base: Path, source: Path):
    """This side's /opt/ml as ``/opt/ml`` and its source tarball (``sagemaker_submit_directory``,
    ``SM_MODULE_DIR``: the cloud's is on S3) as ``SOURCE``, in every string of ``value``."""
    text = json.dumps(value)
    return json.loads(text.replace(str(source), "SOURCE").replace(str(base), "/opt/ml"))


def _container_layout(request: dict, base: Path, sdist: Path, data: Path) -> None:
    """``/opt/ml`` as SageMaker lays it out for ``request``, with two local stand-ins for S3: the
    source tarball (``sagemaker_submit_directory``) is a local copy of the one the backend uploads, and
    ``model_dir`` is the local model folder (the TF container would ask S3 for the bucket's region), as the local
    contract does."""
    hps = dict(request["HyperParameters"])
    hps["sagemaker_submit_directory"] = json.dumps(str(sdist))
    hps["model_dir"] = json.dumps(str(base / "model"))
    hosts = ["algo-1"]
    group = "homogeneousCluster"
    instance = request["ResourceConfig"]["InstanceType"]
    resource = {
        "current_host": "algo-1",
        "current_instance_type": instance,
        "current_group_name": group,
        "hosts": hosts,
        "instance_groups": [{"instance_group_name": group, "instance_type": instance, "hosts": hosts}],
        "network_interface_name": "eth0",
    }
    channels = {
        ch["ChannelName"]: {
            "TrainingInputMode": ch["InputMode"],
            "S3DistributionType": ch["DataSource"]["S3DataSource"]["S3DataDistributionType"],
            "RecordWrapperType": "None",
        }
        for ch in request.get("InputDataConfig", [])
    }
    config = base / "input" / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "hyperparameters.json").write_text(json.dumps(hps))
    (config / "resourceconfig.json").write_text(json.dumps(resource))
    (config / "inputdataconfig.json").write_text(json.dumps(channels))
    for name in channels:
        shutil.copytree(data, base / "input" / "data" / name)
    for folder in ("model", "output/data", "checkpoints", "code"):
        (base / folder).mkdir(parents=True, exist_ok=True)


def _container_probe(tmp_path: Path, spec, sdist, data: Path) -> dict:
    assert TOOLKIT_PYTHON.exists(), "run `make .venv-sm-toolkit/.synced` (make test does) to install AWS's entry"
    cloud = dataclasses.replace(
        spec, backend="sagemaker", staging_bucket="s3://my-bucket", output_dir="s3://my-bucket/out"
    )
    request = create_training_job(cloud, sdist)
    base = tmp_path / "container" / "opt" / "ml"
    sourcedir = tmp_path / "container" / "sourcedir.tar.gz"  # what the SageMaker backend uploads
    sourcedir.parent.mkdir(parents=True)
    write_sourcedir(sdist, sourcedir, script=True)
    _container_layout(request, base, sourcedir, data)
    env = {
        **_base_env(),
        **platform_env(spec.job_name),
        **request.get("Environment", {}),
        "SAGEMAKER_BASE_DIR": str(base),
    }
    result = subprocess.run(
        [str(TOOLKIT_PYTHON), "-c", ENTRY], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return _normalize(json.loads((base / "model" / "probe.json").read_text()), base, sourcedir)


def _local_probe(tmp_path: Path, spec, sdist, data: Path, no_tf) -> dict:
    out = tmp_path / "local"
    local = dataclasses.replace(spec, output_dir=str(out))
    status = no_tf(environ=_base_env(), fetch_channel=lambda spec, channel: data).submit(local, sdist).wait()
    base = out / "algo-1"
    log = (out / "local-run" / "algo-1.log").read_text()
    assert status.state.value == "SUCCEEDED", log[-3000:]
    return _normalize(json.loads((base / "model" / "probe.json").read_text()), base, sdist.path)


@pytest.fixture(scope="module")
def seen(tmp_path_factory, no_tf) -> tuple[dict, dict]:
    """(what the probe saw under AWS's entry, what it saw under ``--local``)."""
    from cloudtrain.spec import DataChannel

    tmp_path = tmp_path_factory.mktemp("entry")
    data = tmp_path / "data"
    data.mkdir()
    (data / "x.csv").write_text("1,2\n")
    sdist = build_script_sdist(PROBE, tmp_path / "dist", "probe.py")
    spec = make_spec(
        tmp_path,
        cloud="sagemaker",
        hyperparameters=HYPERPARAMETERS,
        env={"MY_SETTING": "on"},
        machine_type="ml.c5.xlarge",
    )
    spec = dataclasses.replace(
        spec,
        package=dataclasses.replace(spec.package, path=PROBE, script="probe.py"),
        channels={"training": DataChannel(name="training", source="s3://my-bucket/data/")},
    )
    return _container_probe(tmp_path, spec, sdist, data), _local_probe(tmp_path, spec, sdist, data, no_tf)


def test_every_variable_the_container_entry_sets_is_set_locally_with_its_value(seen):
    container, local = seen
    theirs = {k: v for k, v in _without_request_hash(container["env"]).items() if k not in EXCLUDED}
    ours = {k: v for k, v in local["env"].items() if k not in EXCLUDED}
    assert sorted(set(theirs) - set(ours)) == []  # set in the cloud, missing locally
    assert sorted(set(ours) - set(theirs)) == []  # set locally, absent in the cloud
    for key in sorted(theirs):
        if key in ("SM_TRAINING_ENV",):
            continue
        assert (key, ours[key]) == (key, theirs[key])
    their_training_env, our_training_env = (json.loads(env["SM_TRAINING_ENV"]) for env in (theirs, ours))
    for key in sorted(set(their_training_env) | set(our_training_env)):
        assert (key, our_training_env.get(key)) == (key, their_training_env.get(key))


def test_the_container_values_that_used_to_differ(seen):
    """Pinned by value: what the container entry sets that a local run once lacked or had extra."""
    container, local = seen
    for side in (container, local):
        env = side["env"]
        assert (env["S3_REGION"], env["S3_USE_HTTPS"], env["AWS_REGION"]) == (REGION, "1", REGION)
        assert env["TF_CPP_MIN_LOG_LEVEL"] == "1"
        assert env["SAGEMAKER_JOB_NAME"] == env["TRAINING_JOB_NAME"] != ""
        assert env["PYTHONPATH"].split(":")[0] == "/opt/ml/code"
        # /bin/sh (dash) drops a name that is no shell identifier; the value is still in SM_HPS and argv
        assert "SM_HP_LEARNING-RATE" not in env and json.loads(env["SM_HPS"])["learning-rate"] == 0.05
        assert env["SM_HP_BATCH_SIZE"] == "16"
        assert env["MY_SETTING"] == "on"


def test_argv_cwd_and_sys_path_match(seen):
    container, local = seen
    assert (
        local["argv"]
        == container["argv"]
        == ["--batch_size", "16", "--epochs", "2", "--learning-rate", "0.05", "--model_dir", "/opt/ml/model"]
    )
    assert local["cwd"] == container["cwd"] == "/opt/ml/code"
    # the script's folder, then PYTHONPATH's first entry; the rest is each interpreter's own
    assert local["sys_path"][:2] == container["sys_path"][:2] == ["/opt/ml/code", "/opt/ml/code"]
