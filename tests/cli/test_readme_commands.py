"""The README's commands table says what the code does: every command in it, no flag it lacks."""

from __future__ import annotations

import re

import click

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
