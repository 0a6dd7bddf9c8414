"""``make test`` checks the system programs its tests drive (tools/system_prereqs.sh) before anything else:
everything there, silent and at once; something missing (as a user, not root), one line naming the Debian
packages and the command that installs them, exit 1. The list covers what the Slurm and browser tests run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.conftest import REPO
from tests.slurm.cluster import TOOLS

SCRIPT = REPO / "tools" / "system_prereqs.sh"


def listed() -> dict[str, str]:
    """The script's own list: command → package."""
    block = SCRIPT.read_text().split('PREREQS="', 1)[1].split('"', 1)[0]
    pairs = [re.sub(r"#.*", "", line).split() for line in block.splitlines()]
    return {pair[0]: pair[1] for pair in pairs if pair}


def run_as_user(path: str) -> subprocess.CompletedProcess[str]:
    """The script with this PATH, as a user who is not root (as root it would install); bash reads it from
    stdin, opened here: that user need not reach the checkout (a fresh clone's folder is private)."""
    argv = [shutil.which("bash") or "/bin/bash", "-s"]
    if os.getuid() == 0:
        argv = [
            shutil.which("setpriv") or "/usr/bin/setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            *argv,
        ]
    with open(SCRIPT) as script:
        return subprocess.run(
            argv, stdin=script, env={"PATH": path}, cwd="/", capture_output=True, text=True, timeout=30, check=False
        )


def test_the_list_names_every_program_the_tests_drive() -> None:
    found = listed()
    assert set(TOOLS) <= set(found), set(TOOLS) - set(found)  # tests/slurm's cluster
    assert {"sshd", "chromium"} <= set(found)  # the login node, the browser tests
    assert found["slurmctld"] == "slurm-wlm" and found["chromium"] == "chromium"


def test_a_missing_package_is_one_line_naming_it_and_the_command() -> None:
    missing = sorted(
        {p for c, p in listed().items() if not Path("/usr/sbin", c).exists() and not Path("/sbin", c).exists()}
    )
    assert "chromium" in missing and "slurm-client" in missing  # /usr/bin holds them, left out of PATH here
    done = run_as_user("/nonexistent")  # the script adds /usr/sbin and /sbin
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    named = lines[0].split("system packages ", 1)[1].split(":", 1)[0].split()
    assert sorted(named) == missing
    assert f"sudo apt-get install -y {' '.join(named)}" in lines[0]


def test_everything_there_is_silent() -> None:
    done = run_as_user(os.environ["PATH"] + ":/usr/sbin:/usr/bin")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_make_test_and_ci_check_first() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^test: prereqs ", makefile, re.M)
    assert re.search(r"^prereqs:.*\n\t@tools/k8s/setup.sh$", makefile, re.M)
    assert "tools/system_prereqs.sh" in (REPO / "tools" / "k8s" / "setup.sh").read_text()
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_a_missing_kubernetes_build_is_one_line_naming_it(tmp_path_factory) -> None:
    """Without the cluster's binaries, a user (not root) gets one line with the cache and the command at once,
    never the Kubernetes tests failing one by one after the rest of the suite."""
    tools = Path(tempfile.mkdtemp(dir="/tmp" if Path("/tmp").is_dir() else None))  # readable by that user
    try:
        shutil.copytree(REPO / "tools", tools / "tools")
        for folder in [tools, *(p for p in tools.rglob("*") if p.is_dir())]:
            folder.chmod(0o755)
        cache = tools / "no-such-cache"
        argv = [shutil.which("bash") or "/bin/bash", str(tools / "tools" / "k8s" / "setup.sh")]
        if os.getuid() == 0:
            argv = [
                shutil.which("setpriv") or "/usr/bin/setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                *argv,
            ]
        env = {"PATH": os.environ["PATH"] + ":/usr/sbin:/usr/bin", "CLOUDTRAIN_K8S_CACHE": str(cache)}
        done = subprocess.run(argv, env=env, cwd="/", capture_output=True, text=True, timeout=30, check=False)
    finally:
        shutil.rmtree(tools)
    assert (done.returncode, done.stdout) == (1, "")
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert str(cache / "v1.") in lines[0] and "sudo tools/k8s/setup.sh" in lines[0]
