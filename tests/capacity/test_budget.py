"""budget.max_usd: the cap is price × replicas, a budget that buys under 10 minutes is refused (exit 2, one
line with the fix), and every fallback candidate is held to it at its own price."""

from __future__ import annotations

import json
import textwrap

import pytest

from cloudtrain.cli import main
from cloudtrain.config.load import load_config
from cloudtrain.errors import ConfigError
from tests.conftest import REPO

T4X4 = 2.484  # n1-standard-16 + 4 × T4, the catalog's us-central1 list price per hour
P3_16 = 28.15  # ml.p3.16xlarge, the catalog's us-east-1 list price per hour


def write(tmp_path, *, max_usd: float, replicas: int = 1, extra: str = ""):
    path = tmp_path / "job.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        name: budget
        backend: vertex
        region: us-central1
        project: my-project
        staging_bucket: gs://my-bucket
        machine: {{type: n1-standard-16, accelerator: NVIDIA_TESLA_T4, accelerator_count: 4}}
        replica_count: {replicas}
        package: {{path: {REPO / "trainer"}, module: trainer.task}}
        max_runtime: 2h
        budget: {{max_usd: {max_usd}}}
        """)
        + extra
    )
    return path


def test_a_budget_under_ten_minutes_of_every_replica_is_refused_with_the_least_that_is_enough(tmp_path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, max_usd=0.82, replicas=2))  # 2 × $2.484/h: $0.82 buys 594 s
    assert caught.value.field == "budget.max_usd" and caught.value.line == 10
    assert "$0.82 buys 9 min on 2 × n1-standard-16 at $4.97/h" in str(caught.value)
    assert "raise max_usd to at least $0.83" in str(caught.value)  # 600 s × $4.968/h, rounded up by a cent
    load_config(write(tmp_path, max_usd=0.83, replicas=2))  # 601 s: enough
    load_config(write(tmp_path, max_usd=0.82, replicas=1))  # one replica: 1,188 s


def test_the_refusal_is_one_line_and_exit_2(tmp_path, capsys) -> None:
    assert main(["validate", str(write(tmp_path, max_usd=0.1))]) == 2
    err = capsys.readouterr().err
    assert "budget.max_usd" in err and "buys 2 min" in err and "Traceback" not in err


@pytest.mark.parametrize("replicas", [1, 3])
def test_the_cap_in_the_request_is_what_the_budget_buys_of_every_replica(tmp_path, capsys, replicas) -> None:
    assert main(["submit", str(write(tmp_path, max_usd=4, replicas=replicas)), "--dry-run", "-o", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = min(2 * 3600, int(4 / (T4X4 * replicas) * 3600))  # 1 replica: 5,797 s; 3: 1,932 s
    assert out["request"]["jobSpec"]["scheduling"]["timeout"] == f"{expected}s"


def test_a_budget_wider_than_max_runtime_leaves_max_runtime(tmp_path, capsys) -> None:
    assert main(["submit", str(write(tmp_path, max_usd=100)), "--dry-run", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["request"]["jobSpec"]["scheduling"]["timeout"] == "7200s"


def test_each_fallback_candidate_is_refused_at_its_own_price(tmp_path) -> None:
    entry = """\
fallback:
  - region: europe-west4
  - backend: sagemaker
    region: us-west-2
    machine: {type: ml.p3.16xlarge}
    staging_bucket: s3://my-bucket
    role_arn: arn:aws:iam::123456789012:role/SageMakerRole
"""
    with pytest.raises(ConfigError) as caught:  # $1 buys 24 min of the main machine, 2 of the candidate's
        load_config(write(tmp_path, max_usd=1, extra=entry))
    assert caught.value.field == "fallback[1] → budget.max_usd"
    assert f"$1 buys 2 min on 1 × ml.p3.16xlarge at ${P3_16:.2f}/h" in str(caught.value)
    assert "at least $4.70" in str(caught.value)  # 600 s × $28.15/h = $4.6917, up to the cent ($4.69 buys 599 s)


@pytest.mark.parametrize("replicas", [1, 2, 3])
def test_the_least_budget_the_refusal_names_is_accepted(tmp_path, replicas) -> None:
    """Following the hint works: the figure is rounded up to the cent, never down (1 replica: $0.414 → $0.42)."""
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, max_usd=0.01, replicas=replicas))
    named = float(str(caught.value).split("at least $")[1].split()[0])
    load_config(write(tmp_path, max_usd=named, replicas=replicas))
    with pytest.raises(ConfigError):
        load_config(write(tmp_path, max_usd=round(named - 0.01, 2), replicas=replicas))  # and is the least
