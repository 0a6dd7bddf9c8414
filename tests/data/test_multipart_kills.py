"""A multipart upload SIGKILLed at any point leaves nothing open once the next upload has run (issue 27:
a kill between ``CreateMultipartUpload`` and the journal's write leaked the upload, 6 of 23 kills)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys

import pytest

from cloudtrain.data.multipart import PART, journal_dir, put_file
from tests.conftest import REPO

pytestmark = pytest.mark.server

BUCKET = "staging"
KEY = "cloudtrain/data/abc/big.bin"

# Uploads FILE with put_file and SIGKILLs itself right after the KILL_AT-th call to S3 returns (no handler,
# no finally): every boundary between two requests is a point a real kill can land on.
KILLED_UPLOAD = """
import os, signal, sys
from pathlib import Path
from cloudtrain.backends.sagemaker.aws import AwsClients
from cloudtrain.data import multipart
from cloudtrain.data.multipart import put_file
multipart.STALE_SECONDS = 10**9  # moto says every upload began in 2010: keep the age rule out of the way
path, kill_at = Path(sys.argv[1]), int(sys.argv[2])
s3, calls = AwsClients("us-east-1").s3, []

class Killing:
    def __getattr__(self, name):
        method = getattr(s3, name)
        def call(*args, **kwargs):
            result = method(*args, **kwargs)
            calls.append(name)
            if len(calls) == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return result
        return call

put_file(Killing(), path, "staging", sys.argv[3], {})
print(" ".join(calls))
"""


def _open_uploads(s3) -> list[str]:
    return [u["Key"] for u in s3.list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])]


def _upload(path, kill_at: int, key: str = KEY) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", KILLED_UPLOAD, str(path), str(kill_at), key],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_kill_at_any_request_boundary_leaks_no_multipart_upload(aws, tmp_path, monkeypatch):
    from cloudtrain.data import multipart

    monkeypatch.setattr(multipart, "STALE_SECONDS", 10**9)  # moto dates every upload 2010: the journal must do it
    s3 = aws.client("s3", "us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(PART + 1024))  # two parts
    whole = _upload(big, 0)  # never killed: which requests an upload makes
    assert whole.returncode == 0, whole.stderr[-2000:]
    calls = whole.stdout.split()
    assert calls == [
        "list_multipart_uploads",
        "create_multipart_upload",
        "upload_part",
        "upload_part",
        "complete_multipart_upload",
    ]
    # Every boundary once, in a random order (failures name the seed): a kill right after
    # CreateMultipartUpload is the one that leaked. 4 kills of a few seconds each.
    seed = random.randrange(2**32)
    points = random.Random(seed).sample(range(1, len(calls)), len(calls) - 1)
    left_open = 0
    for n, kill_at in enumerate(points):
        killed = _upload(big, kill_at, f"{KEY}.{n}")
        assert killed.returncode == -signal.SIGKILL, (seed, killed.stderr[-2000:])
        left_open += f"{KEY}.{n}" in _open_uploads(s3)
    assert left_open >= 2, f"seed {seed}: the kills left no upload open, so the test shows nothing"

    put_file(s3, big, BUCKET, "cloudtrain/data/abc/next.bin", {})  # the next upload from this machine sweeps
    assert _open_uploads(s3) == [], f"seed {seed}"
    assert sorted(journal_dir().glob("*.json")) == []


def test_an_emptied_or_torn_journal_entry_is_removed(aws, tmp_path):
    s3 = aws.client("s3", "us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    journal_dir().mkdir(parents=True)
    empty, torn = journal_dir() / "0123.json", journal_dir() / "4567.json"
    empty.write_bytes(b"")
    torn.write_text(json.dumps({"bucket": BUCKET, "key": KEY})[:20])
    small = tmp_path / "small.bin"
    small.write_bytes(b"x" * 10)
    put_file(s3, small, BUCKET, KEY, {})
    assert not empty.exists() and not torn.exists()
    assert s3.get_object(Bucket=BUCKET, Key=KEY)["Body"].read() == b"x" * 10
