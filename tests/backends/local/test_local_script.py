"""A SageMaker script-mode script, unchanged, run with ``cloudtrain submit --local`` under both contracts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from cloudtrain.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.tf]

PACKAGES = Path(__file__).resolve().parents[2] / "packages"

SAGEMAKER = """\
name: mnist-script
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://my-bucket
machine: {type: ml.c5.xlarge}
package: {path: sm_script, script: mnist-2.py}
hyperparameters: {epochs: 2, batch_size: 16, learning_rate: 0.05}
data: {training: data}
"""
VERTEX = """\
name: mnist-script
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
machine: {type: n1-standard-4}
package: {path: sm_script, script: mnist-2.py}
hyperparameters: {epochs: 2, batch_size: 16, learning_rate: 0.05}
data: {training: data}
"""


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    shutil.copytree(PACKAGES / "sm_script", tmp_path / "sm_script")
    (tmp_path / "data").mkdir()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype("float32")
    np.save(tmp_path / "data" / "x_train.npy", x)
    np.save(tmp_path / "data" / "y_train.npy", (x[:, 0] > 0).astype("int64"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def submit_local(workdir: Path, text: str) -> Path:
    (workdir / "job.yaml").write_text(text)
    out = workdir / "run"
    code = main(["submit", "--config", str(workdir / "job.yaml"), "--local", "--set", f"output_dir={out}"])
    logs = "\n".join(p.read_text() for p in sorted((out / "local-run").glob("*.log")))
    assert code == 0, logs[-4000:]
    return out


def test_sagemaker_contract_installs_requirements_and_passes_model_dir(workdir):
    # A requirement that is nowhere on this machine until requirements.txt is installed.
    dep = (PACKAGES / "sm_script_dep").as_uri()
    (workdir / "sm_script" / "requirements.txt").write_text(f"cloudtrain-fixture-dep @ {dep}\n")
    out = submit_local(workdir, SAGEMAKER + "env: {FIXTURE_NEEDS_DEP: '1'}\n")
    host = out / "algo-1"
    report = json.loads((host / "model" / "report-algo-1.json").read_text())
    assert report["argv"] == [
        "--batch_size",
        "16",
        "--epochs",
        "2",
        "--learning_rate",
        "0.05",
        "--model_dir",
        str(host / "model"),
    ]
    assert report["cwd"] == str(host / "code")  # the unpacked source folder, as /opt/ml/code
    assert (report["hosts"], report["current_host"], report["num_gpus"]) == (["algo-1"], "algo-1", "0")
    assert report["output_data_dir"] == str(host / "output" / "data")
    assert (host / "model" / "model.keras").is_file()
    assert "fixture_dep 1.0" in (out / "local-run" / "algo-1.log").read_text()


def test_vertex_contract_two_hosts_multi_worker_mirrored_without_model_dir(workdir):
    out = submit_local(
        workdir,
        VERTEX + "replica_count: 2\nmodel_dir: false\n"
        "distribution: {multi_worker_mirrored_strategy: {enabled: true}}\n",
    )
    report = json.loads((out / "model" / "report-workerpool0-0.json").read_text())
    assert report["argv"] == ["--batch_size", "16", "--epochs", "2", "--learning_rate", "0.05"]
    assert report["model_dir"] is None
    assert report["hosts"] == ["workerpool0-0", "workerpool1-0"] and report["current_host"] == "workerpool0-0"
    assert report["replicas"] == 2  # the two processes formed one MultiWorkerMirroredStrategy
    assert report["cwd"] == str(out / "local-run" / "chief" / "code")
    assert (out / "model" / "model.keras").is_file()
    worker = (out / "local-run" / "worker-0.log").read_text()
    assert '"current_host": "workerpool1-0"' in worker and '"replicas": 2' in worker
