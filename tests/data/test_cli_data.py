"""``cloudtrain submit --dry-run`` with data channels: how much would go up, and where the job reads it."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO
from tests.data.conftest import make_folder

CONFIG = """\
name: demo
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://my-bucket/team
machine: {type: ml.m5.xlarge}
package: {path: trainer}
data:
  train: digits
  validation: {source: s3://datasets/digits/val, input_mode: FastFile}
"""


def test_dry_run_says_what_would_be_uploaded_and_uploads_nothing(project, tmp_path):
    make_folder(tmp_path / "digits", {"a.npz": b"A" * 1000, "b/c.npz": b"C" * 24})
    path = project(CONFIG)
    code = (
        "import sys; from cloudtrain.cli import main; rc = main(sys.argv[1:]);"
        "bad = sorted(m for m in sys.modules if m.startswith(('boto3', 'botocore', 'google.cloud.')));"
        "print('IMPORTED', bad, file=sys.stderr); sys.exit(rc)"
    )
    env = {"CLOUDTRAIN_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", code, "submit", "-c", str(path), "--dry-run", "-o", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "IMPORTED []" in result.stderr
    out = json.loads(result.stdout)
    channels = {c["ChannelName"]: c for c in out["request"]["InputDataConfig"]}
    uri = channels["train"]["DataSource"]["S3DataSource"]["S3Uri"]
    assert uri.startswith("s3://my-bucket/team/cloudtrain/data/") and uri.endswith("/")
    assert out["data"]["train"].startswith(f"{tmp_path / 'digits'}: 2 files, 1 KiB → {uri} (uploaded at submit")
    assert out["data"]["validation"] == "s3://datasets/digits/val (read in place) → $SM_CHANNEL_VALIDATION"
    assert channels["validation"]["InputMode"] == "FastFile"
