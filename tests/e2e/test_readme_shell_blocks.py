"""The README's shell blocks work as written, in order, in a shell that starts without the
environment on PATH (as a new user's does after the first command).

Every command in a ```sh block is either run or skipped for a reason stated below: it reaches a
cloud, it names a placeholder (an id the reader's own run printed), or it is a long run another
test already makes (the first command itself, the test suite). A new command no rule covers runs.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

PLACEHOLDER = re.compile(r"…|\b(SWEEP|JOB|CONFIG)\b|\d{8}-\d{6}")


def readme_commands() -> list[str]:
    """Each command of each ```sh block, continuation lines joined, comments dropped."""
    text = (REPO / "README.md").read_text()
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
        for command in block.replace("\\\n", " ").splitlines():
            command = re.sub(r"\s+#.*$", "", command).strip()
            if command:
                commands.append(command)
    return commands


def skip_reason(command: str) -> str | None:
    words = shlex.split(command.replace("…", " … "))
    if PLACEHOLDER.search(command):
        return "names a placeholder for the reader's own job"
    if words[:2] == ["make", "run"] or words[:1] == ["pytest"] or words[:2] in (["make", "test"], ["make", "test-fast"]):
        return "a long run another test makes (the first command, the suite itself)"
    if words[:1] == ["cloudtrain"]:
        if words[1:2] == ["submit"] and "--local" in words:
            return "a TensorFlow training run (tests/e2e/test_readme_first_command.py runs the first one)"
        if "--dry-run" not in words and words[1] in ("submit", "ml-engine", "ai-platform", "ai"):
            return "reaches a cloud"
    return None


def test_the_readme_commands_run_in_order(tmp_path):
    commands = readme_commands()
    run = [c for c in commands if skip_reason(c) is None]
    assert "source .venv/bin/activate" in run and "make install" in run
    assert any(c.startswith("cloudtrain submit") and "--dry-run" in c for c in run)
    assert run.index("source .venv/bin/activate") < min(i for i, c in enumerate(run) if c.startswith("cloudtrain"))
    script = "set -e\n" + "".join(f"echo '>>> {c.replace(chr(39), '')}'\n{c} > /dev/null\n" for c in run)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", str(tmp_path)),
           "CLOUDTRAIN_CACHE_DIR": str(tmp_path / "cache"), "LANG": "C.UTF-8"}  # fmt: skip
    result = subprocess.run(["bash", "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"stopped at:\n{result.stdout[-800:]}\n{result.stderr[-2000:]}"
    assert result.stdout.count(">>> ") == len(run)


def test_every_skip_has_a_reason_that_holds():
    assert skip_reason("cloudtrain submit --config job_configs/gpu4.yaml") == "reaches a cloud"
    assert skip_reason("cloudtrain submit --config job_configs/gpu4.yaml --dry-run") is None
    assert skip_reason("cloudtrain sweep results SWEEP") is not None
    assert skip_reason("cloudtrain validate job_configs/gpu4.yaml") is None
