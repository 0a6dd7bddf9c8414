"""The manual's commands table says what the code does: every command in it, no flag it lacks; and the
sessions, JSON keys and examples the manual shows (README.md and docs/**, read by tests/docs_text.py)
are what the code prints."""

from __future__ import annotations

import re

import click
import pytest

from cloudtrain.cli import cli
from tests import docs_text
from tests.conftest import REPO


def readme_usages() -> list[str]:
    """Each usage in the table under "Commands", without ``cloudtrain``: ``status JOB [-o json]``."""
    section = docs_text.section("Commands")
    usages = []
    for line in section.splitlines():
        if line.startswith("| `cloudtrain "):
            first_cell = re.split(r"(?<!\\)\|", line)[1]
            usages += [u.removeprefix("cloudtrain ") for u in re.findall(r"`([^`]+)`", first_cell)]
    return usages


def command_of(usage: str) -> tuple[str, click.Command]:
    """``sweep results SWEEP`` → ("sweep results", that command): groups are walked down."""
    words: list[str] = []
    command: click.Command = cli
    ctx = click.Context(cli)
    for word in usage.split():
        found = command.get_command(ctx, word) if isinstance(command, click.Group) else None
        if found is None:
            break
        words.append(word)
        command = found
    return " ".join(words), command


def test_every_command_is_in_the_table_and_every_row_is_a_command():
    documented = {command_of(u)[0].split()[0] for u in readme_usages() if command_of(u)[0]}
    assert all(command_of(u)[0] for u in readme_usages()), "a row names a command the CLI does not have"
    ctx = click.Context(cli)
    commands = {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}
    assert documented == {name for name, c in commands.items() if c is not None and not c.hidden}


def test_the_flags_in_the_table_exist_and_output_is_everywhere_it_is_offered():
    for usage in readme_usages():
        name, command = command_of(usage)
        flags = {flag for param in command.params for flag in (*param.opts, *param.secondary_opts)}
        written = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", usage))
        assert written <= flags, f"{name}: the manual names {sorted(written - flags)}, which it does not take"
        if "--output" in flags and not isinstance(command, click.Group):
            assert "-o json" in usage, f"`{name}` takes -o json; its row should say so"


# --- the manual's examples are the real output --------------------------------------------

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


#: A page shows the keys of a JSON document as "`cloudtrain … -o json` prints `{"a", "b": {"c"}}`"
#: ("prints only" when those are all of them, in order).
JSON_SHAPE = re.compile(r"`(cloudtrain [^`]*-o json)`\s+prints\s+(only\s+)?`(\{.*?\})`", re.S)


def json_shapes() -> list[tuple[str, bool, str]]:
    """(command, whether the keys are all of them, the shape) for each JSON shape any page shows."""
    return [
        (" ".join(m[1].split()), bool(m[2]), m[3])
        for page in docs_text.pages()
        for m in JSON_SHAPE.finditer(page.read_text())
    ]


def shape_keys(shape: str) -> tuple[list[str], dict[str, set[str]]]:
    """``{"a", "b": {"c", "d"}}`` → (["a", "b"], {"b": {"c", "d"}}); ``"b": [{"c"}]`` (a list of
    objects) reads the same, its items' keys."""
    keys, nested = [], {}
    for m in re.finditer(r'"(\w+)"(?:\s*:\s*\[?\{([^}]*)\}\]?)?', shape[1:-1]):
        if m.start() and shape[1:-1][: m.start()].count("{") > shape[1:-1][: m.start()].count("}"):
            continue  # inside a nested object: read with its parent
        keys.append(m[1])
        if m[2]:
            nested[m[1]] = set(re.findall(r'"(\w+)"', m[2]))
    return keys, nested


def readme_dry_run_keys() -> tuple[list[str], dict[str, set[str]]]:
    """The keys the "Dry-run" section says ``-o json`` prints, in order, and the nested ones."""
    shown = JSON_SHAPE.search(docs_text.section("Dry-run"))
    assert shown is not None, 'the "Dry-run" section shows no -o json shape'
    return shape_keys(shown.group(3))


def test_the_dry_runs_json_keys_are_the_ones_the_manual_gives(capsys):
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
    section = docs_text.section("Capacity and cost")
    found = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert found is not None, 'no yaml block under "Capacity and cost"'
    block = found.group(1)
    shown = [_without_comment(line) for line in block.splitlines() if _without_comment(line)]
    file_lines = [
        _without_comment(line)
        for line in (REPO / "job_configs" / "fallback.yaml").read_text().splitlines()
        if _without_comment(line)
    ]
    start = file_lines.index(shown[0])
    assert file_lines[start : start + len(shown)] == shown


def readme_sessions() -> list[list[tuple[str, list[str]]]]:
    """Each ```text block of any page that shows a terminal session: its ``$ cloudtrain …`` commands,
    each with the lines the page says it prints."""
    sessions = []
    for block in docs_text.blocks("text"):
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
    """A shown line stands for a printed one; ``…`` in it stands for any text."""
    return re.fullmatch(".*?".join(re.escape(part) for part in shown.split("…")), printed) is not None


#: Files the manual's sessions name, as the reader has them; a session naming any other file is
#: one of the reader's own projects, shown for its shape (tests/packaging cover those lines).
SESSION_FILES = {"my.yaml": MY_YAML}


def _runnable(command: str) -> bool:
    named = [w for w in command.split() if w.endswith((".yaml", ".yml"))]
    return all(w in SESSION_FILES or (REPO / w).is_file() for w in named)


def test_every_session_is_checked_or_names_a_readers_own_project():
    sessions = readme_sessions()
    assert any(_runnable(c) for s in sessions for c, _ in s)
    assert sorted(c for s in sessions for c, _ in s if not _runnable(c)) == [
        "cloudtrain submit --config job.yaml --dry-run",  # docs/how-to/your-own-package.md
        "cloudtrain validate legacy.yaml --strict-legacy",  # docs/explanation/mapping-and-validation.md
    ]


def _run_session_command(command: str, tmp_path) -> list[str]:
    import os
    import shlex
    import subprocess
    import sys

    for name, text in SESSION_FILES.items():
        (tmp_path / name).write_text(text)
    for linked in ("job_configs", "trainer", "docs"):
        if not (tmp_path / linked).exists():
            (tmp_path / linked).symlink_to(REPO / linked)
    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("FORCE_COLOR", None)
    done = subprocess.run(
        [sys.executable, "-m", "cloudtrain", *shlex.split(command)[1:]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return (done.stderr + done.stdout).splitlines()


def _session_commands() -> list[tuple[str, list[str]]]:
    return [(c, lines) for s in readme_sessions() for c, lines in s if _runnable(c)]


@pytest.mark.parametrize(("command", "shown"), [pytest.param(c, lines, id=c) for c, lines in _session_commands()])
def test_a_session_prints_what_the_manual_shows(command, shown, tmp_path):
    """Line for line; a last line that is only ``…`` stands for the rest of the output."""
    printed = _run_session_command(command, tmp_path)
    if shown[-1] == "…":
        shown, printed = shown[:-1], printed[: len(shown) - 1]
    assert len(printed) == len(shown), f"{command}: printed\n" + "\n".join(printed)
    for line, out in zip(shown, printed, strict=True):
        assert _matches(line, out), f"{command}:\nshown:   {line}\nprinted: {out}"


@pytest.mark.parametrize(
    ("command", "complete", "shape"), [pytest.param(c, complete, shape, id=c) for c, complete, shape in json_shapes()]
)
def test_the_json_keys_a_page_shows_are_the_ones_printed(command, complete, shape, capsys, monkeypatch, tmp_path):
    import json
    import shlex

    from cloudtrain.cli import main

    monkeypatch.chdir(REPO)
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    keys, nested = shape_keys(shape)
    main(shlex.split(command)[1:])  # a page may show what a refusal prints (validate: exit 2)
    printed = json.loads(capsys.readouterr().out)
    assert list(printed) == keys if complete else set(keys) <= set(printed), f"{command} printed {list(printed)}"
    for key, inner in nested.items():
        items = printed[key] if isinstance(printed[key], list) else [printed[key]]
        assert items, f"{command}: {key} is empty, so its keys are not checked"
        for item in items:
            assert item is None or set(item) >= inner, f"{command}: {key} has {sorted(item)}"


def test_the_manual_shows_json_shapes_of_more_than_one_command():
    commands = [c for c, _, _ in json_shapes()]
    assert len({c.split()[1] for c in commands}) >= 2
    assert "cloudtrain validate job_configs/gpu4.yaml --set replica_count=0 -o json" in commands  # a list of objects
