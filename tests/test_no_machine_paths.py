"""Recorded test data holds no absolute path of the machine it was made on.

A run recorded on one machine and read back on another is where such a path hurts: the suite passed
where the folder still existed and failed everywhere else (``/tmp/w25/run/cloudtrain-runs/…`` in
tests/report/data). Every data file under tests/ (JSON, JSON lines, YAML, text, golden files, shell
scripts, requirements, TOML…: every file but the Python) is scanned for a path under a machine's own
folders; a data file that must name one keeps it by path for a stated reason below.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

TESTS = REPO / "tests"

#: The roots of a machine's own folders: temporary folders, home folders, this project's work folders.
MACHINE_PATH = re.compile(
    r"(?<![\w.:/~$-])"  # not inside a URL, a relative path, a variable, a word
    r"(/tmp|/var/tmp|/var/folders|/private/(?:tmp|var)|/home|/root|/work|/Users|/mnt/[a-z]|/dev/shm)"
    r"(?=/[\w.-])"
    r"|[A-Za-z]:\\(?:Users|Temp|tmp)\\"
)

#: ``file (relative to tests/)`` → (the path it may name, why it is no path of the recording machine). Each
#: reason is checked where it can be: the path must also be where the reason says it comes from.
ALLOWED: dict[str, tuple[str, str, Path | None]] = {
    "slurm/golden/dry-run-script.txt": (
        "/tmp/cloudtrain-slurm",
        "the cluster's slurm.workdir of the shipped job_configs/slurm.yaml, which the dry run renders: a folder "
        "on the cluster, the same on every machine that dry-runs that config",
        REPO / "job_configs" / "slurm.yaml",
    ),
}


def data_files() -> list[Path]:
    """Every file under tests/ but the Python and what Python or pytest leave there."""
    skip_dirs = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
    return sorted(
        path
        for path in TESTS.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and not skip_dirs & set(path.parts)
    )


def machine_paths(text: str) -> list[str]:
    """Each machine path in ``text``, as far as it goes (to the next quote, space or bracket)."""
    return [re.match(r"[^\s\"'<>()\[\]{},;]*", text[m.start() :])[0] for m in MACHINE_PATH.finditer(text)]  # type: ignore[index]


def test_no_data_file_under_tests_names_a_path_of_a_machine():
    found = {}
    for path in data_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # a binary file (an archive, an image): no path a reader would follow
            continue
        rel = path.relative_to(TESTS).as_posix()
        allowed = ALLOWED.get(rel, ("\0", "", None))[0]
        paths = [p for p in machine_paths(text) if not p.startswith(allowed)]
        if paths:
            found[rel] = sorted(set(paths))[:3]
    assert not found, (
        "recorded test data names paths of the machine it was made on (they exist nowhere else): "
        f"{found}; store a path relative to the test's folder, or a placeholder the test fills in"
    )


@pytest.mark.parametrize("rel", sorted(ALLOWED))
def test_each_allowed_path_is_what_its_reason_says(rel):
    allowed, reason, source = ALLOWED[rel]
    assert reason and (TESTS / rel).is_file(), f"{rel} is gone: drop it from ALLOWED"
    assert allowed in (TESTS / rel).read_text(), f"{rel} no longer names {allowed}: drop it from ALLOWED"
    if source is not None:
        assert allowed in source.read_text(), f"{allowed} is no longer in {source.relative_to(REPO)}: {reason}"


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ('{"name": "/tmp/w25/run/cloudtrain-runs/ke-1"}', ["/tmp/w25/run/cloudtrain-runs/ke-1"]),
        ("env: /home/someone/.cache/cloudtrain/envs/pkg-1 (built)", ["/home/someone/.cache/cloudtrain/envs/pkg-1"]),
        ("cd /Users/me/proj && /root/x", ["/Users/me/proj", "/root/x"]),
        ("/work/wt/fresh/tests/x.json", ["/work/wt/fresh/tests/x.json"]),
        ("/var/folders/xy/T/pytest-1/a", ["/var/folders/xy/T/pytest-1/a"]),
        ("C:\\Users\\me\\proj", ["C:\\Users\\me\\proj"]),
        ("https://example.com/tmp/x gs://bucket/home/x ./tmp/x rel/home/x $HOME/x ~/x", []),
        ("/tmp alone, /homework/x, /moved-away/w25/run", []),
    ],
)
def test_the_scan_finds_machine_paths_and_only_those(text, paths):
    assert machine_paths(text) == paths
