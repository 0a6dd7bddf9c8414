"""``cloudtrain --help`` names every registered backend, with the title its messages use, read from
the registry when the help is shown (a backend registered later, a plugin, is named too)."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from cloudtrain import backends
from cloudtrain.cli import cli
from tests.conftest import REPO


def _help_text(output: str) -> str:
    return " ".join(output.split())  # click wraps the line at the terminal's width


def test_help_names_every_built_in_backend_in_a_fresh_process() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "--help"], cwd=REPO, capture_output=True, text=True, check=True
    )
    text = _help_text(done.stdout)
    # the four built in, first and in this order; a backend registered after them (one line) follows them
    assert (
        "Backends (backend: in the config, or --set backend=NAME): vertex (Vertex AI), sagemaker (SageMaker), "
        "local (this machine), slurm (Slurm)" in text
    )


def test_help_names_a_backend_registered_after_the_built_in_ones() -> None:
    # tests/conftest.py registers the test-only backend "example" (as a plugin would)
    assert "example" in backends.names()
    text = _help_text(CliRunner().invoke(cli, ["--help"]).output)
    names = backends.names()  # the registry's order: example is the last, after any built-in one
    before = names[names.index("example") - 1]
    assert f"{before} ({backends.titles()[before]}), example." in text
    for name in backends.names():
        assert f" {name}" in text


def test_the_registered_titles_are_the_backends_own() -> None:
    for name, title in backends.titles().items():
        if name != "example":  # registered without a title: its name stands
            assert backends.get_backend(name).words.title == title
