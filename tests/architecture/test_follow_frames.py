"""Following a job is the app layer's: from ``cloudtrain.cli.main`` to the backend's ``JobHandle.logs`` the
stack enters ``cli/`` once (``main`` and the command), and it is at most 7 of cloudtrain's frames, ``logs``
included (the CLI parses and prints; the app follows and hands the view lines, progress and the summary).
Measured on a real ``cloudtrain submit`` of the example backend (tests/backends/example/), in this process."""

from __future__ import annotations

import traceback

from cloudtrain.cli import main
from cloudtrain.errors import ExitCode
from tests.backends import example
from tests.config.test_backend_sections import EXAMPLE


def test_main_reaches_job_handle_logs_through_cli_once(project, monkeypatch, capsys):
    stacks: list[list[str]] = []
    logs = example.ExampleJob.logs

    def recorded(self, follow=False, drain=None):
        stacks.append([f"{frame.filename}:{frame.name}" for frame in traceback.extract_stack()])
        yield from logs(self, follow, drain)

    monkeypatch.setattr(example.ExampleJob, "logs", recorded)
    assert main(["submit", str(project(EXAMPLE))]) == ExitCode.OK
    assert "hello" in capsys.readouterr().out
    stack = stacks[0]
    own = [entry for entry in stack if "/cloudtrain/" in entry.split(":")[0]]
    start = max(i for i, entry in enumerate(own) if entry.endswith("cli/__init__.py:main"))
    chain = [entry.split("/cloudtrain/", 1)[1] for entry in own[start:]]
    in_cli = [entry.startswith("cli/") for entry in chain]
    assert in_cli.index(False) == sum(in_cli), chain  # cli/ entered once: its frames are the first ones
    assert chain[-1] == "app/follow.py:follow_job" and len(chain) + 1 <= 7, chain  # + JobHandle.logs itself
