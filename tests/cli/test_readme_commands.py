"""The README's commands table says what the code does: every command in it, no flag it lacks."""

from __future__ import annotations

import re

import click
import pytest

from cloudtrain.cli import cli
from tests.conftest import REPO


def readme_usages() -> list[str]:
    """Each usage in the table under "## Commands", without ``cloudtrain``: ``status JOB [-o json]``."""
    section = (REPO / "README.md").read_text().split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    usages = []
    for line in section.splitlines():
        if line.startswith("| `cloudtrain "):
            first_cell = re.split(r"(?<!\\)\|", line)[1]
            usages += [u.removeprefix("cloudtrain ") for u in re.findall(r"`([^`]+)`", first_cell)]
    return usages


def command_of(usage: str) -> tuple[str, click.Command]:
    """``sweep results SWEEP`` → ("sweep results", that command): groups are walked down."""
    words, command = [], cli
    for word in usage.split():
        if not isinstance(command, click.Group) or word not in command.commands:
            break
        words.append(word)
        command = command.commands[word]
    return " ".join(words), command


def test_every_command_is_in_the_table_and_every_row_is_a_command():
    documented = {command_of(u)[0].split()[0] for u in readme_usages() if command_of(u)[0]}
    assert all(command_of(u)[0] for u in readme_usages()), "a row names a command the CLI does not have"
    assert documented == {name for name, c in cli.commands.items() if not c.hidden}


def test_the_flags_in_the_table_exist_and_output_is_everywhere_it_is_offered():
    for usage in readme_usages():
        name, command = command_of(usage)
        flags = {flag for param in command.params for flag in (*param.opts, *param.secondary_opts)}
        written = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", usage))
        assert written <= flags, f"{name}: the README names {sorted(written - flags)}, which it does not take"
        if "--output" in flags and not isinstance(command, click.Group):
            assert "-o json" in usage, f"`{name}` takes -o json; its row should say so"


# --- the README's examples are the real output --------------------------------------------

README = REPO / "README.md"

#: The ``my.yaml`` of the "Errors" example: a region typo on line 3, a misspelt key on line 9,
#: a YAML 1.1 boolean on line 14.
MY_YAML = """\
name: mnist
backend: vertex
region: us-centrl1
project: my-project
staging_bucket: gs://my-bucket
machine:
  type: n1-standard-16
  accelerator: NVIDIA_TESLA_T4
  accelerator_cout: 4
package:
  path: trainer
  module: trainer.task
spot:
  enabled: off
"""


def readme_dry_run_keys() -> tuple[list[str], dict[str, set[str]]]:
    """The keys the "Dry-run" section says ``-o json`` prints, in order, and the nested ones."""
    section = README.read_text().split("\n## Dry-run\n", 1)[1].split("\n## ", 1)[0]
    shape = re.search(r"`-o json` prints\s+only `(\{.*?\})`", section, re.S).group(1)
    keys, nested = [], {}
    for m in re.finditer(r'"(\w+)"(?:\s*:\s*\{([^}]*)\})?', shape[1:-1]):
        if m.start() and shape[1:-1][:m.start()].count("{") > shape[1:-1][:m.start()].count("}"):
            continue  # inside a nested object: read with its parent
        keys.append(m[1])
        if m[2]:
            nested[m[1]] = set(re.findall(r'"(\w+)"', m[2]))
    return keys, nested


def test_the_dry_runs_json_keys_are_the_ones_the_readme_gives(capsys):
    import json

    from cloudtrain.cli import main

    keys, nested = readme_dry_run_keys()
    for config in ("job_configs/gpu4.yaml", "job_configs/sagemaker-gpu4.yaml", "job_configs/fallback.yaml"):
        assert main(["submit", "--config", str(REPO / config), "--dry-run", "-o", "json"]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert list(printed) == keys, config
        for key, inner in nested.items():  # project is null on SageMaker
            assert printed[key] is None or set(printed[key]) == inner, config
    assert nested == {"project": {"id", "source"}}


def _without_comment(line: str) -> str:
    return re.sub(r"\s+#.*$", "", line).rstrip()


def test_the_fallback_example_is_the_files_own_text():
    """The yaml block under "Capacity and cost" is job_configs/fallback.yaml's, line for line (comments aside)."""
    section = README.read_text().split("\n## Capacity and cost\n", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    shown = [_without_comment(line) for line in block.splitlines() if _without_comment(line)]
    file_lines = [_without_comment(line) for line in (REPO / "job_configs" / "fallback.yaml").read_text().splitlines()
                  if _without_comment(line)]
    start = file_lines.index(shown[0])
    assert file_lines[start:start + len(shown)] == shown


def readme_sessions() -> list[list[tuple[str, list[str]]]]:
    """Each ```text block that shows a terminal session: its ``$ cloudtrain …`` commands, each with
    the lines the README says it prints."""
    sessions = []
    for block in re.findall(r"^```text\n(.*?)^```", README.read_text(), re.S | re.M):
        if not block.startswith("$ cloudtrain "):
            continue
        session: list[tuple[str, list[str]]] = []
        for line in block.splitlines():
            if line.startswith("$ "):
                session.append((line[2:], []))
            else:
                session[-1][1].append(line)
        sessions.append(session)
    return sessions


def _matches(shown: str, printed: str) -> bool:
    """A README line stands for a printed one; ``…`` in it stands for any text."""
    return re.fullmatch(".*?".join(re.escape(part) for part in shown.split("…")), printed) is not None


#: Files the README's sessions name, as the reader has them; a session naming any other file is
#: one of the reader's own projects, shown for its shape (tests/packaging cover those lines).
SESSION_FILES = {"my.yaml": MY_YAML}


def _runnable(command: str) -> bool:
    named = [w for w in command.split() if w.endswith((".yaml", ".yml"))]
    return all(w in SESSION_FILES or (REPO / w).is_file() for w in named)


def test_every_session_is_checked_or_names_a_readers_own_project():
    sessions = readme_sessions()
    assert any(_runnable(c) for s in sessions for c, _ in s)
    assert [c for s in sessions for c, _ in s if not _runnable(c)] == ["cloudtrain submit --config job.yaml --dry-run"]


def _run_session_command(command: str, tmp_path) -> list[str]:
    import os
    import shlex
    import subprocess
    import sys

    for name, text in SESSION_FILES.items():
        (tmp_path / name).write_text(text)
    for linked in ("job_configs", "trainer"):
        if not (tmp_path / linked).exists():
            (tmp_path / linked).symlink_to(REPO / linked)
    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("FORCE_COLOR", None)
    done = subprocess.run([sys.executable, "-m", "cloudtrain", *shlex.split(command)[1:]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    return (done.stderr + done.stdout).splitlines()


def _session_commands() -> list[tuple[str, list[str]]]:
    return [(c, lines) for s in readme_sessions() for c, lines in s if _runnable(c)]


@pytest.mark.parametrize(("command", "shown"), [
    pytest.param(c, lines, id=c) for c, lines in _session_commands()
])  # fmt: skip
def test_a_readme_session_prints_what_the_readme_shows(command, shown, tmp_path):
    printed = _run_session_command(command, tmp_path)
    assert len(printed) == len(shown), f"{command}: printed\n" + "\n".join(printed)
    for line, out in zip(shown, printed):
        assert _matches(line, out), f"{command}:\nREADME:  {line}\nprinted: {out}"
