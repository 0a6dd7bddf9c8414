"""The login node over ssh (the system OpenSSH client, a config file as a user's ~/.ssh/config holds):
status and lines of a job through it, and a connection cut while following loses and repeats nothing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cloudtrain.backends.sagemaker.aws import AwsClients
from cloudtrain.backends.slurm.ssh import control_dir
from tests.slurm.test_submit import REPO, cloudtrain, job_id_of, probe_config

pytestmark = [pytest.mark.slow, pytest.mark.server]
LINES = 30


def test_following_through_the_login_node_survives_a_cut_connection(slurm_login, workdir, tmp_path):
    config = probe_config(tmp_path, workdir, [f"--lines={LINES}", "--interval=0.3"])
    submitted = cloudtrain("submit", "--config", str(config), "--detach")
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    job_id = job_id_of(submitted.stdout + submitted.stderr)
    where = ["--backend", "slurm", "--region", slurm_login.host, "--project", str(workdir)]
    log = tmp_path / "follow.log"
    with open(log, "w") as out:
        follow = subprocess.Popen(
            [*cloudtrain_argv(), "logs", job_id, "--follow", *where], stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 120
        while "line 5 from chief:0" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        # cut every session of the multiplexed connection, the follower's included

        control = os.path.join(control_dir(), "%C")
        subprocess.run(
            ["ssh", "-F", str(slurm_login.ssh_config), "-O", "exit", "-o", f"ControlPath={control}", slurm_login.host],
            capture_output=True,
            timeout=30,
            check=True,
        )
        assert follow.wait(timeout=120) == 0, log.read_text()
    finally:
        if follow.poll() is None:
            follow.kill()
    text = log.read_text()
    for me in ("chief:0", "worker:0"):
        assert [text.count(f"line {i} from {me}\n") for i in range(LINES)] == [1] * LINES, text
    status = json.loads(cloudtrain("status", job_id, "-o", "json", *where).stdout)
    assert status["state"] == "SUCCEEDED" and status["details"]["cluster"] == slurm_login.host


def cloudtrain_argv() -> list[str]:
    return [sys.executable, "-m", "cloudtrain"]


def test_submit_through_the_login_node_builds_the_environment_there(slurm_login, tmp_path, slurm_image_layer, aws):
    workdir = tmp_path / "workdir"
    (workdir / "envs").mkdir(parents=True)
    (workdir / "envs" / slurm_image_layer.name).symlink_to(
        slurm_image_layer
    )  # the image layer reused; the package layer built
    package = tmp_path / "pkg" / "slurm_probe"
    shutil.copytree(REPO / "tests/packages/slurm_probe", package)
    config = probe_config(tmp_path, workdir, ["--lines=2"])
    config.write_text(
        config.read_text()
        .replace(str(REPO / "tests/packages/slurm_probe"), str(package))
        .replace("slurm:\n", f"slurm:\n  login: {slurm_login.host}\n")
        .replace("data:\n", "data:\n  bucket: s3://datasets/eval/\n")
    )
    s3 = AwsClients("us-east-1").s3
    s3.create_bucket(Bucket="datasets")
    s3.put_object(Bucket="datasets", Key="eval/e.txt", Body=b"e1")
    result = cloudtrain("submit", "--config", str(config))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert [out.count(f"line 1 from {me}") for me in ("chief:0", "worker:0")] == [1, 1], out
    # the data folder on this machine, and the bucket downloaded here, were copied over the login node's
    # connection into the workdir by content
    seen = [json.loads(m) for m in re.findall(r"CONTRACT (\{.*\})$", out, re.M)]
    assert len(seen) == 2, out
    for contract in seen:
        channels, data = contract["channels"], contract["data"]
        assert Path(channels["SM_CHANNEL_TRAIN"]).parent == workdir / "data" and data["SM_CHANNEL_TRAIN"] == {
            "a.txt": "a"
        }
        assert Path(channels["SM_CHANNEL_BUCKET"]).parent == workdir / "data"
        assert data["SM_CHANNEL_BUCKET"] == {"e.txt": "e1"}
    (env,) = [p for p in (workdir / "envs").iterdir() if p.name.startswith("pkg-")]
    assert json.loads((env / "cloudtrain-env.json").read_text())["kind"] == "package"
    job_id = job_id_of(out)
    status = json.loads(cloudtrain("status", job_id, "-o", "json").stdout)  # cluster and workdir from history
    assert status["state"] == "SUCCEEDED" and status["details"]["cluster"] == slurm_login.host
