"""The manual's shell blocks work as written, in order: the README's in a shell that starts without
the environment on PATH (as a new user's does after the first command), then each docs page's in a
shell where the README's set-up has put `cloudtrain` on PATH (as a reader of that page has it).

Every command in a ```sh block is either run or skipped for a reason stated below: it reaches a
cloud, it names a placeholder (an id the reader's own run printed), or it is a long run another
test already makes (the first command itself, the test suite, a benchmark, mutation testing).
A new command no rule covers runs.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import docs_text
from tests.conftest import REPO

pytestmark = pytest.mark.slow

PLACEHOLDER = re.compile(r"…|\b(SWEEP|JOB\d*|CONFIG)(_\d+)?\b|\d{8}-\d{6}")  # SWEEP_3: a trial of a Slurm sweep


def readme_commands() -> list[str]:
    return docs_text.shell_commands(docs_text.README)


def docs_pages_with_commands() -> list[str]:
    return [str(p.relative_to(REPO)) for p in docs_text.pages()[1:] if docs_text.shell_commands(p)]


def skip_reason(command: str) -> str | None:
    words = shlex.split(command.replace("…", " … "))
    if PLACEHOLDER.search(command):
        return "names a placeholder for the reader's own job"
    if words[:1] == ["pytest"] or words[:2] in (
        ["make", "run"],
        ["make", "test"],
        ["make", "test-fast"],
        ["make", "test-fresh"],
    ):
        return "a long run another test makes (the first command, the suite itself)"
    if words[:2] == ["make", "install"]:
        return "installs into the reader's home (~/.local): tests/test_make_install.py runs it into a scratch PREFIX"
    if words[:2] in (["make", "bench"], ["make", "mutate"]) or words[:3] == ["python", "-m", "bench"]:
        return "a benchmark or mutation run: minutes to hours (tests/bench/test_bench_smoke.py runs each bench)"
    if words[:1] in (["gcloud"], ["aws"], ["kubectl"]):
        return (
            "the cloud's own CLI or kubectl: reaches a cloud or the reader's cluster (tests/kubernetes uses a real one)"
        )
    if words[:1] == ["cloudtrain"]:
        if "--experiment" in words:
            return "names the reader's own experiment (tests/tensorboard/test_experiments.py runs these on one)"
        if words[1:2] == ["submit"] and "--local" in words:
            return "a TensorFlow training run (tests/e2e/test_readme_first_command.py runs the first one)"
        if "--dry-run" not in words and words[1] in ("submit", "ml-engine", "ai-platform", "ai"):
            return "reaches a cloud"
    return None


def run_in_order(commands: list[str], tmp_path, path: str, cwd: Path = REPO) -> None:
    """Run ``commands`` in one shell from the repository's root, stopping at the first that fails."""
    script = "set -e\n" + "".join(f"echo '>>> {c.replace(chr(39), '')}'\n{c} > /dev/null\n" for c in commands)
    env = {
        "PATH": path,
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "CLOUDTRAIN_CACHE_DIR": str(tmp_path / "cache"),
        "LANG": "C.UTF-8",
    }
    result = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"stopped at:\n{result.stdout[-800:]}\n{result.stderr[-2000:]}"
    assert result.stdout.count(">>> ") == len(commands)


def test_the_readme_commands_run_in_order(tmp_path):
    commands = readme_commands()
    run = [c for c in commands if skip_reason(c) is None]
    assert "source .venv/bin/activate" in run and "make dev" in run
    assert any(c.startswith("cloudtrain submit") and "--dry-run" in c for c in run)
    assert run.index("source .venv/bin/activate") < min(i for i, c in enumerate(run) if c.startswith("cloudtrain"))
    run_in_order(run, tmp_path, "/usr/local/bin:/usr/bin:/bin")


@pytest.mark.parametrize("page", docs_pages_with_commands())
def test_a_docs_pages_commands_run_in_order(page, tmp_path):
    """After the README's set-up (``make dev``; ``source .venv/bin/activate``), as its reader has it."""
    run = [c for c in docs_text.shell_commands(REPO / page) if skip_reason(c) is None]
    cwd = REPO
    if any(re.match(r"(mkdir|touch|cp|sed -i) .*\bcloudtrain/", c) for c in run):  # it edits the package itself:
        cwd = tmp_path / "checkout"  # in a copy of it, never the checkout a parallel test reads
        for part in ("cloudtrain", "tests"):
            shutil.copytree(REPO / part, cwd / part, ignore=shutil.ignore_patterns("__pycache__", "packages"))
    run_in_order(run, tmp_path, f"{REPO / '.venv' / 'bin'}:/usr/local/bin:/usr/bin:/bin", cwd)
    if cwd != REPO:
        assert (cwd / "cloudtrain" / "backends" / "mine" / "backend.py").read_text().count("Mine") >= 1


def test_every_docs_page_with_commands_is_run():
    pages = docs_pages_with_commands()
    assert "docs/tutorial/first-job.md" in pages and "docs/how-to/sweeps.md" in pages
    tutorial = [c for c in docs_text.shell_commands(REPO / "docs/tutorial/first-job.md") if skip_reason(c) is None]
    assert any("--dry-run" in c for c in tutorial) and any(c.startswith("cloudtrain validate") for c in tutorial)


def test_every_skip_has_a_reason_that_holds():
    assert skip_reason("cloudtrain submit --config job_configs/gpu4.yaml") == "reaches a cloud"
    assert skip_reason("cloudtrain submit --config job_configs/gpu4.yaml --dry-run") is None
    assert skip_reason("cloudtrain sweep results SWEEP") is not None
    assert skip_reason("cloudtrain validate job_configs/gpu4.yaml") is None
    assert skip_reason("cloudtrain report JOB1 JOB2") is not None
    assert skip_reason("python -m bench --only preemption") is not None
