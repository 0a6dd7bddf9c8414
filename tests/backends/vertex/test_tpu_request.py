"""A single-host TPU VM's CustomJob: against golden files that cite Vertex's documentation, and the v1 proto.

Each golden file is ``{"_source": <the dated Vertex doc example it follows>, "request": <render>}``.
Regenerate after an intended change with
``CLOUDTRAIN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/backends/vertex/test_tpu_request.py`` and read the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cloudtrain.backends.vertex import BACKEND
from cloudtrain.errors import UsageError
from cloudtrain.spec import MachineSpec
from tests.backends.vertex.conftest import make_spec

GOLDEN = Path(__file__).parent / "golden" / "tpu"
_CONFIGURE_COMPUTE = "cloud.google.com/vertex-ai/docs/training/configure-compute#tpu (TPU section, as documented 2025)"
_IMAGE = "cloud.google.com/vertex-ai/docs/training/pre-built-containers (TensorFlow 2.15 TPU row, read 2026-11-25)"
TPU_IMAGE = "us-docker.pkg.dev/vertex-ai/training/tf-tpu.2-15.cp310:latest"

CASES = {
    "v5e_4t": (
        MachineSpec(
            type="ct5lp-hightpu-4t",
            accelerator="TPU_V5_LITEPOD",
            accelerator_count=4,
            gpu_model=None,
            disk_gb=100,
            price_per_hour=5.52,
            price_region="us-central1",
            price_date="2025-01",
            tpu_cores=4,
            tpu_topology="2x2",
        ),
        f"{_CONFIGURE_COMPUTE}: machineSpec {{machineType: ct5lp-hightpu-4t, tpuTopology: 2x2}}; image: {_IMAGE}",
    ),
    "v3_8": (
        MachineSpec(
            type="cloud-tpu",
            accelerator="TPU_V3",
            accelerator_count=8,
            gpu_model=None,
            disk_gb=100,
            price_per_hour=9.2,
            price_region="us-central1",
            price_date="2025-01",
            tpu_cores=8,
        ),
        f"{_CONFIGURE_COMPUTE}: machineSpec "
        "{machineType: cloud-tpu, acceleratorType: TPU_V3, acceleratorCount: 8}; "
        f"image: {_IMAGE}",
    ),
}


def _render(name, package):
    machine, _ = CASES[name]
    spec = make_spec(machine=machine, replica_count=1, image_uri=TPU_IMAGE, tensorflow_version="2.15", spot=True)
    return BACKEND.render(spec, package)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tpu_request_matches_golden(name, package):
    path = GOLDEN / f"{name}.json"
    text = json.dumps({"_source": CASES[name][1], "request": _render(name, package)}, indent=2, sort_keys=True) + "\n"
    if os.environ.get("CLOUDTRAIN_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"render changed; see the module docstring to update {path.name}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_tpu_request_parses_as_custom_job_with_its_tpu_fields(name, package):
    from google.cloud.aiplatform_v1.types import AcceleratorType, CustomJob
    from google.protobuf import json_format

    body = _render(name, package)
    message = CustomJob.pb(CustomJob())
    json_format.ParseDict(body, message, ignore_unknown_fields=False)
    assert json_format.MessageToDict(message) == body
    pool = message.job_spec.worker_pool_specs[0]
    assert len(message.job_spec.worker_pool_specs) == 1 and pool.replica_count == 1
    assert pool.python_package_spec.executor_image_uri == TPU_IMAGE
    if name == "v5e_4t":
        assert (pool.machine_spec.machine_type, pool.machine_spec.tpu_topology) == ("ct5lp-hightpu-4t", "2x2")
        assert pool.machine_spec.accelerator_count == 0
    else:
        assert pool.machine_spec.accelerator_type == AcceleratorType.TPU_V3
        assert (pool.machine_spec.accelerator_count, pool.machine_spec.tpu_topology) == (8, "")


def test_several_tpu_hosts_are_refused_in_one_line(package):
    machine, _ = CASES["v5e_4t"]
    with pytest.raises(UsageError) as info:
        BACKEND.render(make_spec(machine=machine, replica_count=2), package)
    assert "multi-host TPU slices (pods) are not supported yet" in str(info.value) and "\n" not in str(info.value)


def test_a_script_job_on_a_tpu_vm_is_told_it_has_no_gpu(package):
    from cloudtrain.backends.vertex import request as vertex_request

    machine, _ = CASES["v3_8"]
    spec = make_spec(
        machine=machine,
        replica_count=1,
        package=make_spec().package.__class__(
            path=Path("/src"), module="trainer.task", requirements=(), name=None, version="0.1", script="train.py"
        ),
    )
    assert vertex_request.script_env(spec) == {"SM_NUM_GPUS": "0"}
