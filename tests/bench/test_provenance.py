"""The report says which runs' commits are not on main and which sections are stale, checked with git
in a temporary repository; the bench refuses to run on a tree with uncommitted changes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench import __main__ as runner
from bench import _provenance, report

from .test_report import results  # noqa: F401  (the fixture: a fake results dict)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
    return git(repo, "rev-parse", "--short=12", "HEAD")


@pytest.fixture
def repo(tmp_path) -> dict:
    """A history: ``measured`` (the run's commit), then a trainer change, then a change elsewhere;
    ``side``: a commit on another branch, never merged."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    measured = commit(path, {"trainer/task.py": "v1", "bench/trainer_bench.py": "b", "README.md": "r"}, "measured")
    git(path, "checkout", "-qb", "side")
    side = commit(path, {"trainer/task.py": "side"}, "side")
    git(path, "checkout", "-q", "main")
    trainer_changed = commit(path, {"trainer/task.py": "v2"}, "trainer changed")
    commit(path, {"README.md": "r2"}, "docs only")
    return {"path": path, "measured": measured, "side": side, "trainer_changed": trainer_changed}


def test_check_lists_files_changed_on_the_path_since_the_commit(repo):
    check = _provenance.check(repo["path"], repo["measured"], ("trainer", "bench/trainer_bench.py"))
    assert (check.on_main, check.changed, check.stale) == (True, ("trainer/task.py",), True)
    later = _provenance.check(repo["path"], repo["trainer_changed"], ("trainer", "bench/trainer_bench.py"))
    assert (later.on_main, later.changed, later.stale) == (True, (), False)  # README.md changed: not on the path


def test_a_commit_off_main_or_unknown_is_not_on_main(repo):
    assert _provenance.check(repo["path"], repo["side"], ("trainer",)).on_main is False
    assert _provenance.check(repo["path"], "ef516d21e89b", ("trainer",)).on_main is False
    assert _provenance.check(repo["path"].parent, repo["measured"], ("trainer",)).on_main is None  # no repository


def _from(results, repo, trainer_commit: str, cli_commit: str) -> dict:  # noqa: F811
    """The fake results with the trainer bench run on ``trainer_commit`` and the CLI bench on ``cli_commit``."""
    results["benches"]["trainer"] = dict(
        results["benches"]["cli"], name="trainer", module="bench.trainer_bench", commit=trainer_commit, data=None
    )
    results["benches"]["cli"]["commit"] = cli_commit
    results["meta"]["machine"]["git_commit"] = trainer_commit  # the other benches' run
    results["runs"] = [
        {"command": "python -m bench --only trainer", "commit": trainer_commit, "benches": ["trainer"]},
        {"command": "python -m bench --only cli", "commit": cli_commit, "benches": ["cli"]},
    ]
    return results


def test_report_marks_a_stale_section_and_a_run_off_main(results, repo):  # noqa: F811
    md = report.render(_from(results, repo, repo["measured"], "ef516d21e89b"), repo=repo["path"])
    trainer = md.split("## 3. Trainer")[1].split("## 4.")[0]
    assert (
        f"**Stale:** 1 file(s) on its measured path changed since commit {repo['measured']} (`trainer/task.py`): "
        "these figures describe that commit's code, not this report's."
    ) in trainer
    cli = md.split("## 1. CLI latency")[1].split("## 2.")[0]
    assert "on commit ef516d21e89b (**not on main**), " in cli
    assert (
        "**Not on main:** commit ef516d21e89b is not in this report's history, so what changed since it cannot be "
        "told: these figures may not describe this report's code."
    ) in cli
    assert "Stale" not in cli
    assert "`python -m bench --only cli` on commit ef516d21e89b (**not on main**): " in md.split("\n## ")[0]
    assert (f"`python -m bench --only trainer` on commit {repo['measured']}: ") in md.split("\n## ")[0]
    assert (
        "- **Not current:** stale (files on their measured path changed since their run): trainer, preemption; "
        "measured on a commit that is not on main: cli."
    ) in md  # preemption ran on the same commit


def test_a_section_measured_after_the_last_change_on_its_path_is_not_stale(results, repo):  # noqa: F811
    md = report.render(_from(results, repo, repo["trainer_changed"], repo["trainer_changed"]), repo=repo["path"])
    assert "Stale" not in md and "not on main" not in md and "Not current" not in md


def test_the_bench_refuses_a_tree_with_uncommitted_changes(repo, tmp_path, monkeypatch, capsys):
    (repo["path"] / "trainer" / "task.py").write_text("uncommitted")
    monkeypatch.setattr(runner, "REPO", repo["path"])
    out = tmp_path / "out"
    assert runner.main(["--only", "cli", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "python -m bench: the tree has uncommitted changes (trainer/task.py), so no commit describes the "
        "code it would measure; commit or stash them, or pass --allow-dirty for a development run"
    ]
    assert not out.exists()  # nothing run, nothing written


def test_a_development_run_on_a_dirty_tree_says_so_in_the_report(results):  # noqa: F811
    results["meta"]["dirty"] = ["trainer/task.py"]
    head = report.render(results).split("\n## ")[0]
    assert (
        "- **Development run on a tree with uncommitted changes** (`--allow-dirty`): `trainer/task.py`; the "
        "commit below does not describe the code measured."
    ) in head


def test_allow_dirty_runs_and_the_report_names_the_uncommitted_files(repo, tmp_path, monkeypatch):
    """The real runner on a dirty tree: the bench itself cannot start there (no bench package in this
    repository), and the report still says it was a development run, with the files."""
    (repo["path"] / "trainer" / "task.py").write_text("uncommitted")
    monkeypatch.setattr(runner, "REPO", repo["path"])
    out = tmp_path / "out"
    assert runner.main(["--only", "cli", "--out", str(out), "--allow-dirty"]) == 1  # the bench failed: exit 1
    md = (out / "benchmarks.md").read_text()
    assert (
        "- **Development run on a tree with uncommitted changes** (`--allow-dirty`): `trainer/task.py`; the "
        "commit below does not describe the code measured."
    ) in md
