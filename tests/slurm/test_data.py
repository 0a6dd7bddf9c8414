"""Data channels on the real test cluster: a folder on the workdir's filesystem is read in place, a folder
elsewhere is copied into the workdir by content (only what changed; reused), a bucket is downloaded once.
The user's package (tests/packages/slurm_probe) prints what it reads at $SM_CHANNEL_<NAME>."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from cloudtrain.backends.sagemaker.aws import AwsClients
from tests.slurm.test_submit import cloudtrain, job_id_of, probe_config

pytestmark = [pytest.mark.slow, pytest.mark.server]


def contracts(out: str) -> dict[str, dict]:
    """Each task's CONTRACT line (what the probe saw), by task."""
    found = [json.loads(m) for m in re.findall(r"CONTRACT (\{.*\})$", out, re.M)]
    return {c["task"]: c for c in found}


@pytest.fixture
def elsewhere():
    """A data folder on another filesystem than the workdir (tmpfs), as a user's local disk is."""
    folder = Path(tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None, prefix="ct-data-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_local_and_bucket_channels_reach_the_tasks(slurm, workdir, tmp_path, elsewhere, aws):
    assert elsewhere.stat().st_dev != workdir.stat().st_dev, "the test needs a second filesystem (/dev/shm)"
    (elsewhere / "sub").mkdir()
    (elsewhere / "x.txt").write_text("x1")
    (elsewhere / "sub" / "y.txt").write_text("y1")
    s3 = AwsClients("us-east-1").s3
    s3.create_bucket(Bucket="datasets")
    s3.put_object(Bucket="datasets", Key="eval/e.txt", Body=b"e1")
    config = probe_config(tmp_path, workdir, ["--lines=1"])
    config.write_text(
        config.read_text().replace("data:\n", f"data:\n  copied: {elsewhere}\n  bucket: s3://datasets/eval/\n")
    )
    result = cloudtrain("submit", "--config", str(config))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    seen = contracts(out)
    assert sorted(seen) == ["chief:0", "worker:0"], out
    for c in seen.values():
        channels, data = c["channels"], c["data"]
        assert channels["SM_CHANNEL_TRAIN"] == str(tmp_path / "data")  # the workdir's filesystem: in place
        copied = Path(channels["SM_CHANNEL_COPIED"])
        assert copied.parent == workdir / "data" and copied != elsewhere
        assert data["SM_CHANNEL_COPIED"] == {"x.txt": "x1", os.path.join("sub", "y.txt"): "y1"}
        assert Path(channels["SM_CHANNEL_BUCKET"]).parent == workdir / "data" / "buckets"
        assert data["SM_CHANNEL_BUCKET"] == {"e.txt": "e1"}
    assert "data copied: copying 2 files" in out, out

    # one file changed: only it is sent, into a new folder; the unchanged one is shared with the first
    (elsewhere / "x.txt").write_text("x2")
    again = cloudtrain("submit", "--config", str(config), "--detach")
    out2 = again.stdout + again.stderr
    assert again.returncode == 0, out2
    assert "data copied: copying 1 file, 2 bytes of 2 files" in out2, out2
    assert "data bucket:" not in out2 or "copying" not in out2.split("data bucket:", 1)[1].split("\n", 1)[0]
    job_id = job_id_of(out2)
    slurm.run("scancel", job_id)
    folders = sorted(p for p in (workdir / "data").iterdir() if len(p.name) == 64)
    assert len(folders) == 2
    (first,) = [f for f in folders if f == copied]
    (second,) = [f for f in folders if f != copied]
    assert (second / "x.txt").read_text() == "x2"
    assert os.path.samefile(first / "sub" / "y.txt", second / "sub" / "y.txt")  # one object, linked twice
