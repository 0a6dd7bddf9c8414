"""render: JobSpec → CustomJob REST JSON, against golden files and the v1 proto itself.

Regenerate the golden files after an intended change with
``CLOUDTRAIN_UPDATE_GOLDEN=1 uv run --frozen pytest tests/backends/vertex/test_request.py``
and read the diff.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cloudtrain.backends.vertex import BACKEND
from cloudtrain.backends.vertex import request as vertex_request
from cloudtrain.backends.vertex.job_settings import VertexSettings
from cloudtrain.errors import UsageError
from cloudtrain.spec import DataChannel, ResumeSpec
from tests.backends.vertex.conftest import make_spec

GOLDEN = Path(__file__).parent / "golden"
SPECS: dict[str, dict[str, Any]] = {
    "gpu4x2": {},
    "spot_cpu_1": dict(
        replica_count=1,
        machine=make_spec().machine.__class__(
            type="n1-standard-8",
            accelerator=None,
            accelerator_count=0,
            gpu_model=None,
            disk_gb=200,
            price_per_hour=0.38,
            price_region="us-central1",
            price_date="2024-05-01",
        ),
        image_uri="us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest",
        spot=True,
        max_runtime_seconds=3600,
        args=(),
        hyperparameters={},
        env={},
        labels={},
        backend_settings=VertexSettings(
            service_account="trainer@my-project.iam.gserviceaccount.com",
            network="projects/123456789/global/networks/default",
        ),
    ),
    "channels": dict(
        channels={
            "train": DataChannel("train", "gs://datasets/digits/train"),
            "Val_1": DataChannel("Val_1", "gs://datasets/digits/val/"),
            "extra": DataChannel("extra", "/home/me/extra", uri="gs://my-bucket/cloudtrain/data/" + "e" * 64 + "/"),
        },
    ),
    # secrets: python -m cloudtrain_secrets reads the references and runs the module; no value in the request.
    "secrets": dict(
        secrets={
            "HF_TOKEN": "gcp:projects/my-project/secrets/hf-token/versions/latest",
            "WANDB_API_KEY": "gcp:projects/my-project/secrets/wandb/versions/3",
        }
    ),
    # tensorboard: + experiment: the instance in jobSpec.tensorboard (beside the service account Vertex writes its
    # logs as, and the base output directory), the experiment as a label (the SDK builds the same: test_sdk_tensorboard)
    "tensorboard": dict(
        region="europe-west4",
        output_dir="gs://team-bucket/runs/demo-20240501-120000",
        tensorboard="projects/my-project/locations/europe-west4/tensorboards/8123",
        experiment="lr-sweep",
        backend_settings=VertexSettings(service_account="trainer@my-project.iam.gserviceaccount.com"),
    ),
    # submit --resume: the new job writes under the base output directory of the job it continues.
    "resume": dict(
        spot=True,
        resume=ResumeSpec("1234567890", "gs://my-bucket/out/old-job/checkpoints", "gs://my-bucket/out/old-job"),
    ),
}


@pytest.fixture(params=sorted(SPECS))
def case(request, package):
    return request.param, BACKEND.render(make_spec(**SPECS[request.param]), package)


def test_render_matches_golden(case):
    name, body = case
    path = GOLDEN / f"{name}.json"
    text = json.dumps(body, indent=2, sort_keys=True) + "\n"
    if os.environ.get("CLOUDTRAIN_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"render changed; see the module docstring to update {path.name}"


def test_render_parses_as_custom_job_with_unknown_fields_rejected(case):
    from google.cloud.aiplatform_v1.types import CustomJob
    from google.protobuf import json_format

    _, body = case
    message = json_format.ParseDict(body, CustomJob.pb(CustomJob()), ignore_unknown_fields=False)
    # canonical proto3 JSON: parsing and printing again gives back exactly the same data
    assert json_format.MessageToDict(message) == body


def test_an_unknown_field_is_refused_by_the_parse(package):
    from google.protobuf import json_format

    from cloudtrain.backends.vertex.jobs import custom_job_message

    body = BACKEND.render(make_spec(), package)
    body["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["gpuCount"] = 4
    with pytest.raises(json_format.ParseError, match="gpuCount"):
        custom_job_message(body)


def test_pools_chief_then_workers_on_the_same_machine(package):
    pools = BACKEND.render(make_spec(replica_count=4), package)["jobSpec"]["workerPoolSpecs"]
    assert [p["replicaCount"] for p in pools] == ["1", "3"]
    assert pools[0]["machineSpec"] == pools[1]["machineSpec"]
    assert pools[0]["pythonPackageSpec"] == pools[1]["pythonPackageSpec"]
    assert len(BACKEND.render(make_spec(replica_count=1), package)["jobSpec"]["workerPoolSpecs"]) == 1


def test_package_uri_is_content_addressed(package):
    uri = BACKEND.render(make_spec(), package)["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]["packageUris"]
    assert uri == [f"gs://my-bucket/cloudtrain/packages/{package.sha256}/{package.filename}"]


def test_submit_id_is_deterministic_and_per_submit(package):
    a = BACKEND.render(make_spec(), package)["labels"][vertex_request.SUBMIT_ID_LABEL]
    assert a == BACKEND.render(make_spec(), package)["labels"][vertex_request.SUBMIT_ID_LABEL]
    b = BACKEND.render(make_spec(job_name="demo-20240501-120001"), package)["labels"][vertex_request.SUBMIT_ID_LABEL]
    assert a != b


def test_staging_bucket_must_be_gcs(package):
    with pytest.raises(UsageError, match="gs://"):
        BACKEND.render(make_spec(staging_bucket="s3://nope"), package)


def test_job_names_and_console_url():
    name = "projects/123/locations/europe-west4/customJobs/42"
    assert vertex_request.split_job_name(name) == ("123", "europe-west4", "42")
    assert vertex_request.job_name("p", "us-central1", "42") == "projects/p/locations/us-central1/customJobs/42"
    assert vertex_request.job_name("p", "us-central1", name) == name
    assert vertex_request.console_url("p", "us-central1", "42") == (
        "https://console.cloud.google.com/vertex-ai/locations/us-central1/training/42/cpu?project=p"
    )


def test_importing_and_rendering_loads_no_cloud_sdk():
    code = (
        "import sys, json\n"
        "from tests.backends.vertex.conftest import make_spec, make_package\n"
        "from pathlib import Path; import tempfile\n"
        "from cloudtrain.backends.vertex import BACKEND\n"
        "json.dumps(BACKEND.render(make_spec(), make_package(Path(tempfile.mkdtemp()))))\n"
        "sdk = ('google.cloud.', 'google.api_core', 'google.auth', 'grpc', 'google.protobuf')\n"
        "bad = [m for m in sys.modules if m.startswith(sdk)]\n"
        "assert not bad, bad\n"
    )
    root = Path(__file__).resolve().parents[3]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


REPO = Path(__file__).resolve().parents[3]


def _vertex_configs() -> list[Path]:
    import yaml

    found = []
    for path in sorted((REPO / "job_configs").glob("*.yaml")):
        data = yaml.safe_load(path.read_text()) or {}
        if data.get("backend") == "vertex" or "trainingInput" in data:
            found.append(path)
    return found


@pytest.mark.parametrize("config", _vertex_configs(), ids=lambda p: p.name)
def test_every_shipped_vertex_config_renders_a_valid_custom_job(config, package):
    """From YAML through load_config and build_spec: what --dry-run prints parses as a CustomJob."""
    import datetime as dt

    from google.cloud.aiplatform_v1.types import CustomJob, HyperparameterTuningJob
    from google.protobuf import json_format

    from cloudtrain.config.load import load_config
    from cloudtrain.spec import build_spec

    spec = build_spec(load_config(config), now=dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc))
    body = BACKEND.render(spec, package)
    kind = HyperparameterTuningJob if spec.sweep else CustomJob  # a sweep's trials run that CustomJob's jobSpec
    message = json_format.ParseDict(body, kind.pb(kind()), ignore_unknown_fields=False)
    assert json_format.MessageToDict(message) == body
    pools = body["trialJobSpec" if spec.sweep else "jobSpec"]["workerPoolSpecs"]
    assert sum(int(p["replicaCount"]) for p in pools) == spec.replica_count
    assert body["labels"][vertex_request.SUBMIT_ID_LABEL]


def test_channels_are_read_through_cloud_storage_fuse(package):
    body = BACKEND.render(make_spec(**SPECS["channels"]), package)
    for pool in body["jobSpec"]["workerPoolSpecs"]:  # every replica, chief and workers
        env = {e["name"]: e["value"] for e in pool["pythonPackageSpec"]["env"]}
        assert env == {
            "TF_CPP_MIN_LOG_LEVEL": "1",
            "SM_CHANNEL_TRAIN": "/gcs/datasets/digits/train",
            "SM_CHANNEL_VAL_1": "/gcs/datasets/digits/val",
            "SM_CHANNEL_EXTRA": "/gcs/my-bucket/cloudtrain/data/" + "e" * 64,
        }
