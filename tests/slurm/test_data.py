"""A user's package on the real test cluster (tests/packages/slurm_probe prints what it reads at
$SM_CHANNEL_<NAME>), and its data channels: a folder on the workdir's filesystem is read in place, a folder
elsewhere is copied into the workdir by content (only what changed; reused), a bucket is downloaded once."""

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


def test_a_users_package_runs_one_task_per_node_and_reads_its_data(slurm, workdir, tmp_path, elsewhere, aws):
    """One job for the contract a user's package sees on each node (TF_CONFIG, its lines labelled by node
    and task, the report's GPU-hours) and for its three kinds of data channel."""
    assert elsewhere.stat().st_dev != workdir.stat().st_dev, "the test needs a second filesystem (/dev/shm)"
    (elsewhere / "sub").mkdir()
    (elsewhere / "x.txt").write_text("x1")
    (elsewhere / "sub" / "y.txt").write_text("y1")
    s3 = AwsClients("us-east-1").s3
    s3.create_bucket(Bucket="datasets")
    s3.put_object(Bucket="datasets", Key="eval/e.txt", Body=b"e1")
    config = probe_config(tmp_path, workdir, ["--lines=3"])
    config.write_text(
        config.read_text().replace("data:\n", f"data:\n  copied: {elsewhere}\n  bucket: s3://datasets/eval/\n")
    )
    result = cloudtrain("submit", "--config", str(config))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    seen = contracts(out)
    assert sorted(seen) == ["chief:0", "worker:0"], out
    # both tasks saw the same cluster: two distinct address:port pairs, chief first
    assert seen["chief:0"]["cluster"] == seen["worker:0"]["cluster"]
    cluster = seen["chief:0"]["cluster"]
    assert len(set(cluster["chief"] + cluster["worker"])) == 2
    for me in ("chief:0", "worker:0"):
        assert [line for line in out.splitlines() if f"line 1 from {me}" in line].__len__() == 1, out
    assert re.search(r"node1/task-0.*line 0 from chief:0", out), out
    assert re.search(r"node2/task-1.*line 0 from worker:0", out), out
    for c in seen.values():
        channels, data = c["channels"], c["data"]
        assert channels["SM_CHANNEL_TRAIN"] == str(tmp_path / "data")  # the workdir's filesystem: in place
        assert data["SM_CHANNEL_TRAIN"] == {"a.txt": "a"}
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
    assert len(list((workdir / "data" / "buckets").iterdir())) == 1  # the same objects: downloaded once
    job_id = job_id_of(out2)
    slurm.run("scancel", job_id)
    folders = sorted(p for p in (workdir / "data").iterdir() if len(p.name) == 64)
    assert len(folders) == 2
    (first,) = [f for f in folders if f == copied]
    (second,) = [f for f in folders if f != copied]
    assert (second / "x.txt").read_text() == "x2"
    assert os.path.samefile(first / "sub" / "y.txt", second / "sub" / "y.txt")  # one object, linked twice

    # the report counts GPU-hours (the launcher's times × GPUs per node) in place of dollars
    report = cloudtrain("report", job_id_of(out), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stdout + report.stderr
    html = (tmp_path / "report" / "report.html").read_text()
    assert (
        "0 GPU-hours, from the launcher&#x27;s start and end times × GPUs per node" in html
        or "0 GPU-hours, from the launcher's start and end times × GPUs per node" in html
    ), html[-3000:]
