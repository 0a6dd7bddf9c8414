"""An upload that is killed or stopped leaves no multipart upload open and no temp folder behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from cloudtrain.cli import main
from tests.conftest import REPO
from tests.fakes.aws import MotoAws
from tests.fakes.stall import StallingProxy

pytestmark = [pytest.mark.slow, pytest.mark.server]

BUCKET = "cloudtrain-leaks"
CONFIG = f"""\
name: leaks
backend: sagemaker
region: us-east-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://{BUCKET}
machine: {{type: ml.m5.large}}
package: {{path: trainer}}
"""


@pytest.fixture
def project(tmp_path, aws: MotoAws, monkeypatch):
    """A package of ~10 MB that does not compress (two parts of up to 8 MiB), a bucket, a private temp dir."""
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text("print('hi')\n")
    (pkg / "weights.bin").write_bytes(os.urandom(10 * 2**20))
    (tmp_path / "job.yaml").write_text(textwrap.dedent(CONFIG))
    aws.client("s3", "us-east-1").create_bucket(Bucket=BUCKET)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp_path


def _stalled_submit(project: Path, aws: MotoAws, proxy: StallingProxy) -> subprocess.Popen:
    """A `cloudtrain submit` in a subprocess whose S3 upload is frozen in its first part."""
    env = {**os.environ, "AWS_ENDPOINT_URL_S3": proxy.url, "TMPDIR": str(project / "tmp")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudtrain", "submit", "--config", str(project / "job.yaml"), "--detach"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while not (proxy.stalled.is_set() and _open_uploads(aws)):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the upload never started"
        time.sleep(0.05)
    return proc


def _open_uploads(aws: MotoAws) -> list[dict]:
    return aws.client("s3", "us-east-1").list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])


def _temp_folders(project: Path) -> list[str]:
    return [p.name for p in (project / "tmp").glob("cloudtrain-*")]


def test_a_killed_upload_is_swept_by_the_next_submit(project, aws: MotoAws, capsys):
    with StallingProxy(aws.server.get_host_and_port()[1], stall_after=4 * 2**20) as proxy:
        proc = _stalled_submit(project, aws, proxy)
        proc.kill()  # no chance to clean up: what a kill -9 or a lost machine leaves
        proc.communicate()
    assert len(_open_uploads(aws)) == 1  # the leak the next submit must clear
    assert [n.split("-")[1] for n in _temp_folders(project)] == ["sourcedir"]

    assert main(["submit", "--config", str(project / "job.yaml"), "--detach"]) == 0, capsys.readouterr().err
    assert _open_uploads(aws) == []
    assert _temp_folders(project) == []
    s3 = aws.client("s3", "us-east-1")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert len(keys) == 1 and keys[0].endswith("/sourcedir.tar.gz")  # complete, from the second submit
    assert not list((Path(os.environ["CLOUDTRAIN_CACHE_DIR"]) / "uploads").glob("*.json"))


def test_a_stopped_upload_aborts_at_once_and_removes_its_temp_folder(project, aws: MotoAws):
    with StallingProxy(aws.server.get_host_and_port()[1], stall_after=4 * 2**20) as proxy:
        proc = _stalled_submit(project, aws, proxy)
        proc.send_signal(signal.SIGTERM)  # `kill`, a CI timeout: unwinds like Ctrl-C
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err
    assert _open_uploads(aws) == []
    assert _temp_folders(project) == []
