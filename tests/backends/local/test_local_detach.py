"""``cloudtrain submit --local --detach``: the run keeps going after the command returns, and the
printed hint, ``status``, ``cancel`` and ``logs --follow`` reach it from later commands."""

from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import shutil
import signal
from pathlib import Path

import pytest

from cloudtrain.backends import get_backend
from cloudtrain.cli import main
from cloudtrain.errors import ExitCode
from tests.backends.local.conftest import bare_image

pytestmark = pytest.mark.slow

ECHO_LINES = Path(__file__).resolve().parents[2] / "packages" / "echo_lines"
CONFIG = """\
name: detached
backend: local
region: us-central1
project: my-project
machine: {type: n1-standard-4}
package: {path: echo_lines, module: echo_lines.task}
"""
HINT = re.compile(r"reattach: (cloudtrain logs \S+ --follow)")


@pytest.fixture
def detach(tmp_path, monkeypatch, shared_cache, capsys):
    """``submit --detach`` of tests/packages/echo_lines with these args (and these config lines); returns the
    printed reattach command."""
    from cloudtrain.backends.local.backend import LocalBackend

    monkeypatch.chdir(tmp_path)
    shutil.copytree(ECHO_LINES, tmp_path / "echo_lines")
    local = LocalBackend(
        cache_root=shared_cache, gpu_count=lambda: 0, image_for=lambda spec: bare_image(), log=lambda m: None
    )
    monkeypatch.setattr(importlib.import_module("cloudtrain.backends.local.backend"), "BACKEND", local)

    def submit(*args: str, config: str = "") -> list[str]:
        (tmp_path / "job.yaml").write_text(CONFIG + config)
        argv = ["submit", "--config", "job.yaml", "--detach", "--set", f"args={json.dumps(list(args))}"]
        assert main(argv) == ExitCode.OK
        found = HINT.search(capsys.readouterr().out)
        assert found, "submit --detach printed no reattach command"
        return shlex.split(found.group(1))[1:]

    return submit


def _status(job: str, capsys) -> dict:
    capsys.readouterr()
    main(["status", job, "-o", "json"])
    return json.loads(capsys.readouterr().out)


def test_the_printed_hint_follows_a_detached_run_to_its_end_printing_each_line_once(detach, capsys):
    command = detach("--line", "first line", "--line", "second line")
    assert main(command) == ExitCode.OK
    out = capsys.readouterr().out
    assert [out.count("first line"), out.count("second line")] == [1, 1]
    assert out.index("first line") < out.index("second line")


def test_a_detached_run_that_fails_exits_1_on_reattach(detach, capsys):
    command = detach("--line", "never printed", "--no-such-flag")  # argparse exits 2 before any line
    assert main(command) == ExitCode.JOB_FAILED
    captured = capsys.readouterr()
    assert captured.out.count("task.py: error: unrecognized arguments: --no-such-flag") == 1  # the replica's stderr
    assert "replica chief exited with code 2" in captured.err


def test_a_detached_run_runs_on_after_submit_returns_and_cancel_stops_it(detach, capsys):
    command = detach("--line", "holding", "--hold")
    job = command[1]
    run = get_backend("local").attach(job)
    assert next(line.message for line in run.logs(follow=True) if line.replica == "chief") == "holding"
    assert _status(job, capsys)["state"] == "RUNNING"  # submit has returned: nobody here follows it
    assert main(["cancel", job]) == ExitCode.OK
    assert main(command) == ExitCode.INTERRUPTED
    assert capsys.readouterr().out.count("holding") == 1
    assert _status(job, capsys)["state"] == "CANCELLED"


def test_a_killed_supervisor_reads_as_failed_with_one_line_saying_so(detach, capsys):
    command = detach("--line", "holding", "--hold")
    owner = _status(command[1], capsys)["details"]["owner_pid"]
    os.kill(owner, signal.SIGKILL)
    assert main(command) == ExitCode.JOB_FAILED  # never hangs: the run reads as ended once its owner is gone
    status = _status(command[1], capsys)
    assert status["state"] == "FAILED"
    assert f"the process that ran it (pid {owner}) ended without recording how the run ended" in status["message"]


def test_a_detached_run_through_max_queue_runs_on_in_a_process_of_its_own_and_succeeds(detach, tmp_path, capsys):
    """With ``max_queue:`` (or ``fallback:``) submit watches the run start before it returns: the run must still
    be handed to a supervisor of its own, or it would die with the command that submitted it."""
    go = tmp_path / "go"
    command = detach("--line", "waiting", "--until", str(go), config="max_queue: 1h\n")
    status = _status(command[1], capsys)
    assert status["state"] == "RUNNING"  # submit has returned and the run goes on
    owner = status["details"]["owner_pid"]  # a detached run's supervisor (an attached run has none)
    assert owner != os.getpid() and os.getpgid(owner) != os.getpgid(0)  # not this process, nor its group
    go.touch()
    assert main(command) == ExitCode.OK
    assert capsys.readouterr().out.count("waiting") == 1
    assert _status(command[1], capsys)["state"] == "SUCCEEDED"


def test_status_of_a_detached_run_as_it_runs_and_list_once_it_ended(detach, tmp_path, capsys):
    """What the run recorded at its start is not shown as now: its wall time grows while it runs, a replica
    still running has no exit code yet, the bookkeeping of its processes stays in ``-o json``; once it
    ended, ``list -o json`` and ``cloudtrain.jobs()`` say so though no command here saw it end."""
    import time

    import cloudtrain

    go = tmp_path / "go"
    job = detach("--line", "waiting", "--until", str(go))[1]
    time.sleep(1.5)
    capsys.readouterr()
    assert main(["status", job]) == ExitCode.OK
    shown = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines()[1:])
    assert float(shown["wall time"].removesuffix(" s")) >= 1.5, shown["wall time"]
    assert shown["exit codes"] == "chief not yet" and "pid starts chief" not in shown and "owner start" not in shown
    details = _status(job, capsys)["details"]
    assert details["exit_codes"] == {"chief": None} and set(details["pid_starts"]) == {"chief"}
    assert isinstance(details["owner_start"], int)
    go.touch()
    run = get_backend("local").attach(job)
    while not run.status().state.terminal:  # its end, seen by no command here (logs --follow would record it)
        time.sleep(0.1)
    capsys.readouterr()
    assert main(["list", "-o", "json"]) == ExitCode.OK
    listed = json.loads(capsys.readouterr().out)[0]
    assert (listed["job_id"], listed["state"]) == (job, "SUCCEEDED") and listed["ended"] is not None
    record = cloudtrain.jobs(1)[0]
    assert (record.state, record.ended) == ("SUCCEEDED", listed["ended"])
