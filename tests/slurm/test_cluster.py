"""The test cluster itself: batch jobs and their steps run on both nodes, here and through the login node."""

from __future__ import annotations

import subprocess

import pytest

from tests.slurm.cluster import NODES

pytestmark = [pytest.mark.slow, pytest.mark.server]


def test_srun_runs_one_task_on_each_node(slurm):
    out = slurm.run("srun", "-N2", "--ntasks-per-node=1", "--label", "bash", "-c", "echo $SLURMD_NODENAME").stdout
    assert sorted(line.split(": ")[1] for line in out.splitlines()) == list(NODES)


def test_sbatch_steps_span_both_nodes(slurm, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\nsrun bash -c 'echo $SLURMD_NODENAME $SLURM_PROCID'\n")
    slurm.run("sbatch", "--parsable", "--wait", "-N2", f"--output={tmp_path}/out.txt", str(script))
    assert sorted((tmp_path / "out.txt").read_text().splitlines()) == ["node1 0", "node2 1"]


def test_the_login_node_reaches_the_cluster(slurm_login):
    cmd = ["ssh", "-F", str(slurm_login.ssh_config), slurm_login.host, "srun -N2 -l printenv SLURMD_NODENAME"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=60).stdout
    assert sorted(line.split(": ")[1] for line in out.splitlines()) == list(NODES)
