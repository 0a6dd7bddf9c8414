"""The README's examples run as written: every file a command names exists in this repository, and
the command, run from the repository's root with ``--dry-run`` added (nothing reaches a cloud), plans
what the README says it starts."""

from __future__ import annotations

import shlex

import pytest

from cloudtrain.cli import main
from tests import docs_text
from tests.conftest import REPO


def from_gcloud() -> list[str]:
    """The words of the one command of the README's "From gcloud" block."""
    commands = docs_text.shell_commands_of(docs_text.section("From gcloud"))
    assert len(commands) == 1, commands
    return shlex.split(commands[0])


def test_every_path_the_from_gcloud_command_names_exists():
    named = [w.split("=", 1)[-1] for w in from_gcloud() if w.startswith("./") or w.startswith("--config=")]
    named += [w for w in from_gcloud() if w.endswith((".yaml", "/")) and not w.startswith(("gs://", "--"))]
    assert named, "the command names no file"
    for path in named:
        assert (REPO / path).exists(), f"the README's From gcloud command names {path}, which is not in the repository"


def test_the_from_gcloud_command_plans_what_the_readme_says(monkeypatch, capsys):
    words = from_gcloud()
    assert words[:2] == ["cloudtrain", "ml-engine"]
    monkeypatch.chdir(REPO)
    code = main([*words[1:], "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0, out
    said = docs_text.section("From gcloud")
    for claim in ("n1-standard-16", "4 × T4", "asia-east1"):
        assert claim in said, f"the README no longer says {claim}: update this test"
    assert "region: asia-east1" in out and "machine: n1-standard-16, 4 × T4" in out
    assert "mapped: trainingInput.runtimeVersion: 1.10 → 2.17" in out  # the README's mapped: line


@pytest.mark.parametrize("flag", ["--package-path", "--job-dir", "--region"])
def test_the_from_gcloud_command_keeps_gclouds_flags(flag):
    assert flag in from_gcloud()
