"""A spot job's $/hour says what it is: the catalog's on-demand list price, and what the cloud bills instead."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from cloudtrain.cli import main

ROOT = Path(__file__).resolve().parents[2]
CONFIG = f"""
name: spot-price
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
machine: {{type: n1-standard-16, accelerator: NVIDIA_TESLA_T4, accelerator_count: 4}}
package: {{path: {ROOT / "trainer"}, module: trainer.task}}
spot: {{enabled: true}}
fallback:
  - backend: sagemaker
    region: us-east-1
    machine: {{type: ml.g4dn.12xlarge}}
    staging_bucket: s3://my-bucket
    role_arn: arn:aws:iam::123456789012:role/SageMakerRole
  - spot: {{enabled: false}}
"""


def test_dry_run_says_which_price_each_candidate_uses(tmp_path, capsys) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    assert main(["submit", "--config", str(path), "--dry-run", "-o", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["price_basis"].startswith("on-demand list price; spot VMs bill less")
    assert out["fallbacks"][0]["price_basis"].startswith("on-demand list price; managed spot bills only BillableTime")
    assert out["fallbacks"][1]["price_basis"] == "on-demand list price"
    assert main(["submit", "--config", str(path), "--dry-run"]) == 0
    assert "us-central1 on-demand list price; spot VMs bill less" in capsys.readouterr().out
