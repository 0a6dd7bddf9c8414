"""One real Slurm cluster (and an sshd standing for its login node) per test session, torn down at the end."""

from __future__ import annotations

import dataclasses
import getpass
from collections.abc import Iterator
from pathlib import Path

import pytest

from cloudtrain.backends.runner import venv
from tests.slurm.cluster import Cluster, LoginNode, login_node, missing_tools, slurm_cluster


@pytest.fixture(scope="session")
def slurm_session(tmp_path_factory) -> Iterator[tuple[Cluster, LoginNode]]:
    missing = missing_tools()
    if missing:
        pytest.fail(
            f"Slurm tests need {', '.join(missing)}: tools/system_prereqs.sh names the packages (as root it "
            "installs them; make test runs it first)"
        )
    root = tmp_path_factory.mktemp("slurm")
    with slurm_cluster(root / "cluster") as cluster, login_node(root / "ssh", cluster) as login:
        yield cluster, login


@pytest.fixture
def slurm(slurm_session, monkeypatch) -> Cluster:
    """The session's cluster, its nodes idle and no job of an earlier test left, with the clients
    (``sbatch``, ``squeue`` … here and through the login node) pointed at it."""
    cluster, _ = slurm_session
    cluster.run("scancel", "--full", "--user", getpass.getuser(), check=False)
    cluster.wait_idle()
    for key, value in cluster.env().items():
        monkeypatch.setenv(key, value)
    return cluster


@pytest.fixture
def slurm_login(slurm_session, slurm, monkeypatch) -> LoginNode:
    """The login node's ssh config, set where a user would set it (``CLOUDTRAIN_SSH_CONFIG``)."""
    _, login = slurm_session
    monkeypatch.setenv("CLOUDTRAIN_SSH_CONFIG", str(login.ssh_config))
    return login


@pytest.fixture(scope="session")
def slurm_image_layer(tf_image, tf_cache) -> Path:
    """The image layer a Slurm job of the tests' configs gets (the slim one, named by ``slurm.python``), built once
    in the test env cache."""
    return venv.ensure_image(dataclasses.replace(tf_image, named="python3"), root=tf_cache)[0]


@pytest.fixture
def workdir(tmp_path, tf_cache, slurm_image_layer):
    """A Slurm workdir whose environments are the test env cache's (content-keyed, shared by the tests)."""
    folder = tmp_path / "workdir"
    folder.mkdir()
    (tf_cache / "envs").mkdir(parents=True, exist_ok=True)
    (folder / "envs").symlink_to(tf_cache / "envs")
    return folder
