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
    assert re.search(r"^prereqs:.*\n\t@.*shell tools/k8s/setup.sh ", makefile, re.M)
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


def missing_without_usr_bin() -> list[str]:
    """The packages the script names with only /usr/sbin and /sbin to look in, in its own order."""
    found = [p for c, p in listed().items() if not Path("/usr/sbin", c).exists() and not Path("/sbin", c).exists()]
    return list(dict.fromkeys(found))


def test_make_test_stops_with_one_line_and_no_make_error_after_it(tmp_path) -> None:
    """What a user sees of ``make test`` on a machine that lacks a package: make's one line, in well under a
    second, before anything is installed or run (the check happens as make reads the recipe)."""
    where = Path(tempfile.mkdtemp(dir="/tmp"))  # a folder the user can reach (tmp_path is root's alone)
    try:
        shutil.copy(REPO / "Makefile", where)
        shutil.copytree(REPO / "tools", where / "tools")
        for folder in [where, *(p for p in where.rglob("*") if p.is_dir())]:
            folder.chmod(0o755)
        bin_dir = where / "bin"  # make and bash, and none of the packages' programs
        bin_dir.mkdir()
        for program in ("make", "bash"):
            (bin_dir / program).symlink_to(shutil.which(program) or f"/usr/bin/{program}")
        nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]
        user = [shutil.which("setpriv") or "/usr/bin/setpriv", *nobody] if os.getuid() == 0 else []
        done = subprocess.run(
            [*user, str(bin_dir / "make"), "test"],
            env={"PATH": str(bin_dir), "HOME": str(where)},
            cwd=where,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    finally:
        shutil.rmtree(where)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Error" not in lines[0], lines
    missing = " ".join(missing_without_usr_bin())
    assert f"system packages {missing}: run 'sudo apt-get install -y {missing}'" in lines[0]


def test_as_root_it_installs_what_is_missing_with_apt_get(tmp_path) -> None:
    """The root branch (CI's): apt-get update, then one install of exactly the missing packages; a fake
    apt-get records its calls (a user namespace makes the caller root where the suite is not)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$DEBIAN_FRONTEND $*" >> {calls}\n')
    (bin_dir / "apt-get").chmod(0o755)
    root = [] if os.getuid() == 0 else ["unshare", "--user", "--map-root-user"]
    with open(SCRIPT) as script:
        done = subprocess.run(
            [*root, shutil.which("bash") or "/bin/bash", "-s"],
            stdin=script,
            env={"PATH": str(bin_dir)},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    missing = missing_without_usr_bin()
    assert (done.returncode, done.stderr) == (0, f"installing {' '.join(missing)} (apt-get)\n")
    assert calls.read_text().splitlines() == [" update -q", f"noninteractive install -y -q {' '.join(missing)}"]
