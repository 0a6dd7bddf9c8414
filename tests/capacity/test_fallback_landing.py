"""What a user sees of fallbacks: the summary printed again for the candidate a job lands on (its own
backend, region, machine and price), the candidates in the config's order, and FLEX_START in the Vertex
request (the Scheduling strategy, with its max wait)."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.capacity.test_fallback import CONFIG
from tests.conftest import REPO
from tests.fakes import aws as fake_aws

FLEX = f"""\
name: flex
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
machine: {{type: a2-highgpu-1g, accelerator: NVIDIA_TESLA_A100, accelerator_count: 1}}
package: {{path: {REPO / "trainer"}, module: trainer.task}}
max_runtime: 3h
flex_start: {{enabled: true, max_wait: 2h}}
"""


def dry_run(tmp_path, capsys, text: str, *overrides: str) -> dict:
    from cloudtrain.cli import main

    path = tmp_path / "job.yaml"
    path.write_text(text)
    sets = [a for o in overrides for a in ("--set", o)]
    assert main(["submit", str(path), "--dry-run", "-o", "json", *sets]) == 0
    return json.loads(capsys.readouterr().out)


def test_flex_start_is_the_vertex_scheduling_strategy_with_its_max_wait(tmp_path, capsys) -> None:
    from google.cloud.aiplatform_v1.types import CustomJob

    out = dry_run(tmp_path, capsys, FLEX)
    assert out["request"]["jobSpec"]["scheduling"] == {
        "timeout": "10800s",
        "strategy": "FLEX_START",
        "maxWaitDuration": "7200s",
    }
    message = CustomJob.from_json(json.dumps(out["request"]), ignore_unknown_fields=False)
    assert message.job_spec.scheduling.strategy.name == "FLEX_START"
    assert message.job_spec.scheduling.max_wait_duration.total_seconds() == 7200


def test_without_flex_start_or_spot_the_strategy_is_left_to_vertex(tmp_path, capsys) -> None:
    out = dry_run(tmp_path, capsys, FLEX, "flex_start.enabled=false", "flex_start.max_wait=null")
    assert out["request"]["jobSpec"]["scheduling"] == {"timeout": "10800s"}
    spot = dry_run(tmp_path, capsys, FLEX, "flex_start.enabled=false", "flex_start.max_wait=null", "spot.enabled=true")
    assert spot["request"]["jobSpec"]["scheduling"] == {"timeout": "10800s", "strategy": "SPOT"}


def test_fallbacks_keep_the_configs_order(tmp_path, capsys) -> None:
    out = dry_run(tmp_path, capsys, textwrap.dedent(CONFIG))
    got = [
        (f["backend"], f["region"], f["request"].get("ResourceConfig", {}).get("InstanceType"))
        for f in out["fallbacks"]
    ]
    assert got == [
        ("vertex", "europe-west4", None),
        ("sagemaker", "us-west-2", "ml.g4dn.12xlarge"),
        ("sagemaker", "us-west-2", "ml.p3.8xlarge"),
    ]


@pytest.mark.server
def test_the_summary_is_printed_again_for_the_candidate_the_job_lands_on(
    tmp_path, capsys, backend, jobs, gcs, aws, monkeypatch
) -> None:
    import cloudtrain.backends.vertex as vertex_module
    from cloudtrain.cli import main

    monkeypatch.setattr(vertex_module, "BACKEND", backend)
    monkeypatch.setattr(fake_aws, "NO_QUOTA", set())
    monkeypatch.setattr(fake_aws, "NO_CAPACITY", set())
    fake_aws.add_capacity_faults()
    aws.client("s3", "us-west-2").create_bucket(
        Bucket="my-bucket", CreateBucketConfiguration={"LocationConstraint": "us-west-2"}
    )
    jobs.create_faults = ["capacity", "quota"]  # both Vertex candidates refused at create
    path = tmp_path / "job.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    assert main(["submit", str(path), "--detach"]) == 0
    out = capsys.readouterr().out
    first, landed = out.split("Landed on fallback 2", 1)
    assert summary_rows(first)["region"] == "asia-east1"  # the main request's summary came first
    rows = summary_rows(landed)
    assert (rows["backend"], rows["region"]) == ("sagemaker", "us-west-2")
    assert rows["machine"].startswith("ml.g4dn.12xlarge, 4 × T4")
    assert rows["cost/hour"].startswith("$4.89 for 1 × ml.g4dn.12xlarge")  # this candidate's price, not asia-east1's
    assert rows["cost cap"].startswith("$3.00: max_runtime 37 min,")  # $3 / $4.89 per hour
    assert rows["output"].startswith("s3://my-bucket/")
    assert rows["cost/hour"].startswith("$4.89 for 1 × ml.g4dn.12xlarge")  # this candidate's price, not asia-east1's
    assert rows["cost cap"].startswith("$3.00: max_runtime 37 min,")  # $3 / $4.89 per hour
    assert rows["output"].startswith("s3://my-bucket/")


def summary_rows(text: str) -> dict[str, str]:
    """The first summary's ``key: value`` rows in plain output."""
    rows: dict[str, str] = {}
    for line in text.split("cloudtrain · ", 1)[1].splitlines()[1:]:
        key, sep, value = line.partition(": ")
        if not sep or key.startswith(("Job ", "Run ")):
            break
        rows.setdefault(key, value)
    return rows
