"""A config's backend-only keys reach that backend's request through its typed settings record
(``JobSpec.backend_settings``); the YAML keeps its shape (top-level keys for Vertex and SageMaker)."""

from __future__ import annotations

import json

from cloudtrain.cli import main
from tests.conftest import SAGEMAKER_BASE, VERTEX_BASE

SERVICE_ACCOUNT = "trainer@my-project.iam.gserviceaccount.com"
NETWORK = "projects/123456789/global/networks/default"


def _dry_run(path, capsys) -> dict:
    assert main(["submit", "--config", str(path), "--dry-run", "-o", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_vertex_keys_reach_the_custom_job(project, capsys) -> None:
    config = project(
        VERTEX_BASE + f"service_account: {SERVICE_ACCOUNT}\nnetwork: {NETWORK}\n"
        "flex_start: {enabled: true, max_wait: 2h}\n"
    )
    job_spec = _dry_run(config, capsys)["request"]["jobSpec"]
    assert (job_spec["serviceAccount"], job_spec["network"]) == (SERVICE_ACCOUNT, NETWORK)
    assert job_spec["scheduling"]["strategy"] == "FLEX_START"
    assert job_spec["scheduling"]["maxWaitDuration"] == "7200s"


def test_without_them_the_custom_job_names_none(project, capsys) -> None:
    job_spec = _dry_run(project(), capsys)["request"]["jobSpec"]
    assert {"serviceAccount", "network"} & set(job_spec) == set()
    assert "strategy" not in job_spec["scheduling"]


def test_the_sagemaker_role_reaches_the_training_job(project, capsys) -> None:
    request = _dry_run(project(SAGEMAKER_BASE), capsys)["request"]
    assert request["RoleArn"] == "arn:aws:iam::123456789012:role/SageMakerRole"


def test_a_job_dir_is_the_output_and_the_package_staging_folder(project, capsys) -> None:
    config = project(VERTEX_BASE.replace("staging_bucket: gs://my-bucket\n", "job_dir: gs://my-bucket/jobs/j1/\n"))
    plan = _dry_run(config, capsys)
    pool = plan["request"]["jobSpec"]["workerPoolSpecs"][0]
    assert plan["request"]["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"] == "gs://my-bucket/jobs/j1"
    assert pool["pythonPackageSpec"]["packageUris"][0].startswith("gs://my-bucket/jobs/j1/packages/")
    assert "--job-dir=gs://my-bucket/jobs/j1" in pool["pythonPackageSpec"]["args"]
