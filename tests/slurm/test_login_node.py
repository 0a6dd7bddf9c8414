"""The login node over ssh (the system OpenSSH client, a config file as a user's ~/.ssh/config holds):
status and lines of a job through it, and a connection cut while following loses and repeats nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest

from tests.slurm.test_submit import cloudtrain, probe_config

pytestmark = [pytest.mark.slow, pytest.mark.server]
LINES = 30


def test_following_through_the_login_node_survives_a_cut_connection(slurm_login, workdir, tmp_path):
    config = probe_config(tmp_path, workdir, [f"--lines={LINES}", "--interval=0.3"])
    submitted = cloudtrain("submit", "--config", str(config), "--detach")
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    job_id = re.search(r"Job (\d+) created", submitted.stdout + submitted.stderr)[1]
    where = ["--backend", "slurm", "--region", slurm_login.host, "--project", str(workdir)]
    log = tmp_path / "follow.log"
    with open(log, "w") as out:
        follow = subprocess.Popen([*cloudtrain_argv(), "logs", job_id, "--follow", *where], stdout=out,
                                  stderr=subprocess.STDOUT)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while "line 5 from chief:0" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        # cut every session of the multiplexed connection, the follower's included
        from cloudtrain.backends.slurm.shell import control_dir

        control = os.path.join(control_dir(), "%C")
        subprocess.run(["ssh", "-F", str(slurm_login.ssh_config), "-O", "exit", "-o", f"ControlPath={control}",
                        slurm_login.host], capture_output=True, timeout=30, check=True)  # fmt: skip
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
    import sys

    return [sys.executable, "-m", "cloudtrain"]
