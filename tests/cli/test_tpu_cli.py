"""TPUs at the command line: the dry-run request and its cost, the TPU table, the one-line refusals."""

from __future__ import annotations

import json


def test_dry_run_shows_the_tpu_request_and_its_cost(cli):
    result = cli("submit", "--config", "job_configs/tpu_v5e.yaml", "--dry-run", "-o", "json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    (pool,) = out["request"]["jobSpec"]["workerPoolSpecs"]
    assert pool["machineSpec"] == {"machineType": "ct5lp-hightpu-4t", "tpuTopology": "2x2"}
    image = pool["pythonPackageSpec"]["executorImageUri"]
    assert image == "us-docker.pkg.dev/vertex-ai/training/tf-tpu.2-15.cp310:latest"
    assert out["cost_per_hour"] == 5.52


def test_dry_run_summary_names_the_tpu_and_the_global_batch(cli):
    result = cli("submit", "--config", "job_configs/tpu_v5e.yaml", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "machine: ct5lp-hightpu-4t, 4 TPU cores (TPU_V5_LITEPOD, 2x2)" in result.stdout
    assert "batch: global 256 = 64 per replica × 4 replicas (TPU cores)" in result.stdout
    assert "cost/hour: $5.52" in result.stdout


def test_local_with_a_tpu_config_says_what_runs_instead(cli):
    result = cli("submit", "--config", "job_configs/tpu_v5e.yaml", "--local", "--dry-run", "-o", "json")
    assert result.returncode == 0, result.stderr
    note = json.loads(result.stdout)["request"]["note"]
    assert note.startswith("ct5lp-hightpu-4t is a TPU VM (4 TPU cores on Vertex AI); --local has no TPU")
    assert "not TPUStrategy" in note


def test_machines_tpu_lists_each_tpu_vm_with_chips_topology_regions_and_price(cli):
    result = cli("machines", "--tpu", "-o", "json")
    assert result.returncode == 0, result.stderr
    rows = {r["machine_type"] + "/" + r["cloud_accelerator"]: r for r in json.loads(result.stdout)}
    assert set(rows) == {
        "ct5lp-hightpu-1t/TPU_V5_LITEPOD",
        "ct5lp-hightpu-4t/TPU_V5_LITEPOD",
        "ct5lp-hightpu-8t/TPU_V5_LITEPOD",
        "cloud-tpu/TPU_V2",
        "cloud-tpu/TPU_V3",
    }
    v5e = rows["ct5lp-hightpu-8t/TPU_V5_LITEPOD"]
    assert (v5e["chips"], v5e["cores"], v5e["topology"], v5e["price_per_hour"]) == (8, 8, "2x4", 11.04)
    assert rows["cloud-tpu/TPU_V3"]["regions"] == ["us-central1", "europe-west4"]


def test_machines_tpu_on_sagemaker_is_one_line_and_exit_2(cli):
    result = cli("machines", "--tpu", "--backend", "sagemaker")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line == "error: SageMaker has no TPUs — cloudtrain machines --tpu (Vertex AI)"


def test_a_tpu_in_the_wrong_region_is_one_line_and_exit_2(cli):
    result = cli("validate", "job_configs/tpu_v5e.yaml", "--set", "region=asia-east1")
    assert result.returncode == 2
    # nearest to Taiwan first
    assert "Vertex AI offers TPU_V5_LITEPOD (TPU v5e) in europe-west4, us-west1" in result.stderr
    assert "Traceback" not in result.stderr
