"""The top-level group loads a command's module only when that command is asked for: ``cloudtrain --help``
pays for no command's imports, and its listing is the one the modules themselves would print."""

from __future__ import annotations

import subprocess
import sys

from tests.architecture.import_graph import REPO

_EAGER_AND_LAZY_HELP = """
import importlib, sys
import click
from cloudtrain.cli import cli
from cloudtrain.backends import commands
from cloudtrain.cli._group import COMMANDS as CLI_COMMANDS

# the CLI's own commands, and those the backends contribute through the registry ("module:attr")
COMMANDS = {**CLI_COMMANDS, **{name: (where.partition(":")[0], text) for name, (where, text) in commands().items()}}

def listing():
    with click.Context(cli, info_name="cloudtrain", terminal_width=200) as ctx:
        return cli.get_help(ctx)

lazy = listing()
loaded = sorted(m for m in sys.modules if m in {module for module, _ in COMMANDS.values()})
for module in sorted({module for module, _ in COMMANDS.values()}):
    importlib.import_module(module)
eager = listing()
ctx = click.Context(cli)
real = {}
for name in cli.list_commands(ctx):
    command = cli.get_command(ctx, name)
    text = command.short_help or (command.help or "").split("\\n\\n")[0]
    real[name] = (command.callback.__module__, " ".join(text.split()))
print(repr((lazy, eager, loaded, real == COMMANDS, sorted(set(real) ^ set(COMMANDS)))))
"""


def _run() -> tuple[str, str, list[str], bool, list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", _EAGER_AND_LAZY_HELP], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    return eval(out)  # our own repr of plain strings, lists and bools


def test_help_lists_every_command_as_the_loaded_modules_would_and_loads_none_of_them() -> None:
    lazy, eager, loaded, table_true, differ = _run()
    assert loaded == []  # --help imported no command module
    assert lazy == eager
    assert "  submit " in lazy and "  validate " in lazy


def test_the_gcloud_forms_and_init_are_contributed_by_the_backends_that_own_their_formats() -> None:
    from cloudtrain.backends import commands

    owners = {name: where.split(".")[2] for name, (where, _text) in commands().items()}
    assert owners == {"ai": "vertex", "ai-platform": "vertex", "ml-engine": "vertex", "init": "sagemaker"}


def test_the_table_names_each_commands_module_and_help_text() -> None:
    _lazy, _eager, _loaded, table_true, differ = _run()
    assert differ == []  # a command added to a module but not to COMMANDS (or the other way) shows here
    assert table_true  # a moved command or an edited first help line shows here: update COMMANDS
