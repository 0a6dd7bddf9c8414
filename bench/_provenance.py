"""Whether a bench's figures still describe the code: its run's commit, and what changed since.

A report draws on runs made on various commits. For each, git tells whether that commit is in
the report's history (an ancestor of HEAD: on main when the report is rendered on main), and
which files on the bench's measured path (:data:`PATHS`) changed between it and HEAD. A section
whose files changed is **stale**: its figures were measured on other code than the report's.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_FOLLOW = ("cloudtrain/backends/follow.py", "tests/fakes/__init__.py")
_VERTEX_LOGS = (
    "cloudtrain/backends/vertex/logs.py",
    "cloudtrain/backends/vertex/cloud_logging.py",
    "tests/fakes/cloud_logging.py",
    *_FOLLOW,
)
_SAGEMAKER_LOGS = (
    "cloudtrain/backends/sagemaker/logs.py",
    "cloudtrain/backends/sagemaker/live_tail.py",
    "tests/fakes/aws.py",
    "tests/fakes/live_tail.py",
    *_FOLLOW,
)
#: Per bench: the files whose change can change its figures — the bench itself, what it measures,
#: the statistics behind its verdicts, and the locked packages where their versions are measured too.
PATHS: dict[str, tuple[str, ...]] = {
    "cli": ("bench/cli_bench.py", "bench/_stats.py", "cloudtrain", "pyproject.toml", "uv.lock", "job_configs"),
    "packaging": ("bench/packaging_bench.py", "cloudtrain/packaging", "tests/packages/mini_trainer", "uv.lock"),
    "vertex_packager": (
        "bench/_vertex_packager.py",
        "bench/packaging_bench.py",
        "tests/packages/mini_trainer",
        "uv.lock",
    ),
    "trainer": ("bench/trainer_bench.py", "bench/_stats.py", "trainer", "uv.lock"),
    "preemption": ("bench/preemption_bench.py", "bench/_stats.py", "trainer", "uv.lock"),
    "vertex_logs": ("bench/vertex_logs_bench.py", "bench/_vertex_baselines.py", "bench/_stats.py", *_VERTEX_LOGS),
    "vertex_late": ("bench/vertex_late_bench.py", "bench/_vertex_baselines.py", "bench/_stats.py", *_VERTEX_LOGS),
    "sagemaker_logs": ("bench/sagemaker_logs_bench.py", *_SAGEMAKER_LOGS),
    "tensorboard_sync": ("bench/tensorboard_sync_bench.py", "cloudtrain/app/mirror.py", "cloudtrain/data/stores.py"),
    "edit_loop": (
        "bench/edit_loop_bench.py",
        "bench/_stats.py",
        "cloudtrain/backends/local",
        "cloudtrain/backends/runner",  # the env builder a local run uses
        "cloudtrain/packaging",
        "cloudtrain/cli",
        "docs/tutorial/my-project",
        "tests/fakes/package_index.py",
    ),
    "log_faults": (
        "bench/log_faults_bench.py",
        "tests/fakes/fault_proxy.py",
        "tests/fakes/vertex_jobs.py",
        *_VERTEX_LOGS,
        *_SAGEMAKER_LOGS,
    ),
}


@dataclass(frozen=True)
class Check:
    """What git says about one run's commit (``changed``: files on the path changed since it)."""

    commit: str
    on_main: bool | None  # None: not checked (no git repository here)
    changed: tuple[str, ...] = ()

    @property
    def stale(self) -> bool:
        return bool(self.changed)


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)


def is_repo(repo: Path) -> bool:
    return repo.is_dir() and _git(repo, "rev-parse", "--git-dir").returncode == 0


def commit_hash(text: str | None) -> str:
    """``"ab12cd34 (uncommitted changes in the tree)"`` → ``"ab12cd34"``; ``""`` when none."""
    return (text or "").split(" ")[0] if text and text != "unknown" else ""


def check(repo: Path, commit: str, paths: tuple[str, ...]) -> Check:
    """``commit``'s place in ``repo``'s history, and the files of ``paths`` changed from it to HEAD."""
    if not is_repo(repo):
        return Check(commit, None)
    known = commit and _git(repo, "cat-file", "-e", f"{commit}^{{commit}}").returncode == 0
    if not known or _git(repo, "merge-base", "--is-ancestor", commit, "HEAD").returncode != 0:
        return Check(commit, False)
    diff = _git(repo, "diff", "--name-only", commit, "HEAD", "--", *paths)
    return Check(commit, True, tuple(line for line in diff.stdout.splitlines() if line))


def dirty(repo: Path) -> list[str]:
    """Tracked files with uncommitted changes (what a run's commit would not describe)."""
    done = _git(repo, "status", "--porcelain", "--untracked-files=no")
    return [line[3:] for line in done.stdout.splitlines() if line.strip()]
