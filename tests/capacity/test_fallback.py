"""Capacity failover on the real servers: the clouds refuse as they word it, the job lands on the right
candidate, nothing created earlier is left running, a user-code failure or a rate limit never moves."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from cloudtrain.app.fallback import first_with_capacity
from cloudtrain.backends.base import JobState
from cloudtrain.backends.sagemaker import SageMakerBackend
from cloudtrain.config.load import load_config
from cloudtrain.errors import NoCapacity
from cloudtrain.spec import build_spec
from tests.fakes import aws as fake_aws
from tests.fakes.vertex_jobs import NO_RESOURCES_ERROR, Script

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[2]
CONFIG = f"""
name: fallback-test
backend: vertex
region: asia-east1
project: my-project
staging_bucket: gs://my-bucket
machine: {{type: n1-standard-16, accelerator: NVIDIA_TESLA_T4, accelerator_count: 4}}
package: {{path: {ROOT / "trainer"}, module: trainer.task}}
args: [--batch-size=32]
max_runtime: 2h
fallback:                     # tried in order when the main request gets no capacity
  - region: europe-west4
  - backend: sagemaker
    region: us-west-2
    machine: {{type: ml.g4dn.12xlarge}}
    staging_bucket: s3://my-bucket
    role_arn: arn:aws:iam::123456789012:role/SageMakerRole
  - backend: sagemaker
    region: us-west-2
    machine: {{type: ml.p3.8xlarge}}
    staging_bucket: s3://my-bucket
    role_arn: arn:aws:iam::123456789012:role/SageMakerRole
budget:
  max_usd: 3
"""


@pytest.fixture
def specs(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    loaded = load_config(path)
    main = build_spec(loaded)
    return [main] + [build_spec(c, now=main.created) for c in loaded.candidates]


@pytest.fixture
def both(backend, aws, gcs, monkeypatch):
    fake_aws.add_capacity_faults()
    monkeypatch.setattr(fake_aws, "NO_QUOTA", set())
    monkeypatch.setattr(fake_aws, "NO_CAPACITY", set())
    aws.client("s3", "us-west-2").create_bucket(
        Bucket="my-bucket", CreateBucketConfiguration={"LocationConstraint": "us-west-2"}
    )
    sagemaker = SageMakerBackend()
    return {"vertex": backend, "sagemaker": sagemaker}.__getitem__


def _land(specs, both, build_package, clock, **kwargs):
    said: list[str] = []
    package = build_package()
    landed = first_with_capacity(
        specs,
        package,
        backend_of=both,
        notify=lambda notice: said.append(notice.text),
        sleep=clock.sleep,
        clock=clock.time,
        poll_s=10,
        **kwargs,
    )
    return landed, said


def test_lands_on_sagemaker_after_vertex_refuses_and_fails_for_capacity(
    specs, both, jobs, aws, build_package, clock
) -> None:
    jobs.create_faults = ["capacity"]  # asia-east1: refused at create, ZONE_RESOURCE_POOL_EXHAUSTED
    jobs.scripts = [Script(states=["PENDING", "FAILED"], error=NO_RESOURCES_ERROR)]  # europe-west4: fails starting
    fake_aws.NO_QUOTA.add("ml.p3.8xlarge")
    landed, said = _land(specs, both, build_package, clock)

    assert landed.index == 2 and landed.spec.backend == "sagemaker" and landed.spec.machine.type == "ml.g4dn.12xlarge"
    assert "does not have enough resources" in said[0] and "no capacity" in said[0] and "moving on" in said[0]
    assert said[1].startswith("trying fallback 1: vertex europe-west4")
    assert "Resources are insufficient in region" in said[2]
    assert said[3].startswith("trying fallback 2: sagemaker us-west-2 1 × ml.g4dn.12xlarge (4 × T4)")
    # nothing created earlier is left running: the first was never created, the second ended FAILED
    assert len(jobs.jobs) == 1 and next(iter(jobs.jobs.values())).state.name == "JOB_STATE_FAILED"
    described = aws.client("sagemaker", "us-west-2").describe_training_job(TrainingJobName=landed.handle.job_id)
    assert described["ResourceConfig"]["InstanceType"] == "ml.g4dn.12xlarge"
    # the budget cap is in the request, from this candidate's own price: $3 / $4.89 per hour
    assert described["StoppingCondition"]["MaxRuntimeInSeconds"] == int(3 / 4.89 * 3600) < 2 * 3600


def test_quota_at_create_moves_on_and_no_candidate_left_is_exit_4(specs, both, jobs, build_package, clock) -> None:
    jobs.create_faults = ["quota", "capacity"]
    fake_aws.NO_CAPACITY.add("ml.g4dn.12xlarge")
    fake_aws.NO_QUOTA.add("ml.p3.8xlarge")
    with pytest.raises(NoCapacity) as caught:
        _land(specs, both, build_package, clock)
    assert caught.value.exit_code == 4
    message = str(caught.value)
    assert "no quota" in message and "no capacity" in message and "CapacityError" in message
    assert "ResourceLimitExceeded" in message and message.count(";") == 3  # all four candidates named


def test_a_user_code_failure_never_moves_to_a_fallback(specs, both, jobs, build_package, clock) -> None:
    jobs.scripts = [Script(states=["PENDING", "FAILED"])]  # "The replica workerpool0-0 exited with … 1."
    landed, said = _land(specs, both, build_package, clock)
    assert landed.index == 0 and landed.status.state is JobState.FAILED and said == []


def test_a_rate_limit_is_retried_where_it_happened_not_moved(specs, both, jobs, build_package, clock) -> None:
    jobs.create_faults = ["rate", "rate"]
    landed, said = _land(specs, both, build_package, clock)
    assert landed.index == 0 and said == [] and jobs.calls.count("create") == 3


def test_a_job_queued_past_max_queue_is_cancelled_and_the_next_tried(specs, both, jobs, build_package, clock) -> None:
    jobs.scripts = [Script(states=["QUEUED"])]  # asia-east1 never leaves the queue
    landed, said = _land(specs, both, build_package, clock, max_queue_s=600)
    assert landed.index == 1 and landed.spec.region == "europe-west4"
    first = jobs.jobs["1000"]
    assert "cancel" in jobs.calls and "max_queue" in said[0]
    assert jobs._run["1000"]["cancel"] is not None  # asked to cancel: nothing left waiting in the queue
    del first


def test_cli_dry_run_shows_every_candidate(tmp_path, capsys, monkeypatch) -> None:
    from cloudtrain.cli import main

    path = tmp_path / "job.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    assert main(["submit", "--config", str(path), "--dry-run", "-o", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["request"]["jobSpec"]["scheduling"]["timeout"] == f"{int(3 / 2.484 * 3600)}s"
    fallbacks = out["fallbacks"]
    assert [(f["backend"], f["region"]) for f in fallbacks] == [
        ("vertex", "europe-west4"),
        ("sagemaker", "us-west-2"),
        ("sagemaker", "us-west-2"),
    ]
    assert fallbacks[1]["request"]["ResourceConfig"]["InstanceType"] == "ml.g4dn.12xlarge"
    assert fallbacks[2]["request"]["StoppingCondition"]["MaxRuntimeInSeconds"] == int(
        3 / fallbacks[2]["cost_per_hour"] * 3600
    )


def test_cost_after_from_sagemakers_billable_seconds(aws, build_package, tmp_path, monkeypatch, capsys) -> None:
    """moto has no BillableTimeInSeconds: the test wrapper sets it as SageMaker reports it (per instance)."""
    from cloudtrain.cli import main
    from tests.backends.sagemaker.conftest import make_spec

    aws.client("s3", "us-east-1").create_bucket(Bucket="cloudtrain-staging")
    spec = make_spec(staging_bucket="s3://cloudtrain-staging", spot=True, replica_count=2)
    handle = SageMakerBackend().submit(spec, build_package())
    aws.set_job("us-east-1", handle.job_id, "Completed", training_seconds=3600, billable_seconds=1200)
    status = handle.status()
    from cloudtrain.backends.cost import cost_after

    cost = cost_after(status)
    assert cost is not None
    price = 4.89  # ml.g4dn.12xlarge, us-east-1 list price in the catalog
    assert cost["usd"] == round(price * 2 * 1200 / 3600, 4)  # billable × 2 instances
    assert cost["spot_savings_usd"] == round(price * 2 * (3600 - 1200) / 3600, 4)
    assert cost["price_region"] == "us-east-1" and cost["price_date"]
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path))
    assert main(["status", handle.job_id, "--backend", "sagemaker", "--region", "us-east-1", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["cost"]["usd"] == cost["usd"]


def test_cost_after_from_vertex_job_times(backend, jobs, gcs, tmp_path, clock) -> None:
    from cloudtrain.backends.cost import cost_after
    from tests.backends.vertex.conftest import make_package, make_spec

    jobs.scripts = [Script(states=["PENDING", "RUNNING", "RUNNING", "SUCCEEDED"])]
    handle = backend.submit(make_spec(), make_package(tmp_path))
    handle.status()
    handle.status()
    clock.sleep(1800)
    handle.status()
    status = handle.status()
    cost = cost_after(status)
    assert cost is not None
    # 2 replicas (pool 0: 1, pool 1: 1) × n1-standard-16 + 4 × T4 for the 30 min between start and end
    assert [p["replica_count"] for p in status.details["pools"]] == [1, 1]
    assert cost["usd"] == pytest.approx(2 * 2.484 * 1800 / 3600, abs=0.01)
    assert "start_time → end_time 1800 s" in cost["basis"]
