"""Damaged local state (history, a local run's status.json) is one line and the right exit code, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cloudtrain import history, statefiles
from cloudtrain.cli import main
from tests.conftest import REPO

GOOD = {"job_id": "demo-1", "name": "cloudtrain-runs/demo-1", "backend": "local", "region": "local"}
STATUS = {
    "job_id": "demo-1", "name": "cloudtrain-runs/demo-1", "state": "SUCCEEDED", "native_state": "succeeded",
    "message": None, "console_url": None, "created": "2025-01-01T00:00:00+00:00", "ended": None,
    "details": {"replicas": ["worker-0"], "exit_code": 0},
}  # fmt: skip


@pytest.fixture(autouse=True)
def _fresh_process():
    statefiles._warned.clear()  # each main() here stands for a new process


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    """A finished local run ``demo-1`` in ./cloudtrain-runs, recorded in history."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "cloudtrain-runs" / "demo-1" / "local-run"
    folder.mkdir(parents=True)
    (folder / "status.json").write_text(json.dumps(STATUS))
    (folder / "worker-0.log").write_text("epoch 1\nepoch 2\n")
    history.record(history.JobRecord(**GOOD))
    return folder


def _history_lines(*lines: bytes) -> None:
    path = history.history_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def test_a_sound_run_reads_back(run_dir, capsys):
    code, out, _ = run(capsys, "status", "demo-1")
    assert code == 0 and "SUCCEEDED" in out
    code, out, _ = run(capsys, "logs", "demo-1")
    assert code == 0 and "epoch 2" in out


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (b"\xff\xfe{not utf-8}", "not UTF-8"),
        (b'{"job_id": "demo-', "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (json.dumps({**GOOD, "job_id": "other", "backend": "mars"}).encode(), "unknown backend 'mars'"),
        (json.dumps({"job_id": "other"}).encode(), "no name, backend, region"),
    ],
    ids=["non-utf8", "torn", "list", "unknown-backend", "missing-fields"],
)
@pytest.mark.parametrize("command", ["status", "logs"])
def test_a_bad_history_line_is_one_warning_and_every_good_record_is_found(run_dir, capsys, bad, why, command):
    before = json.dumps({**GOOD, "job_id": "older"}).encode()
    _history_lines(before, bad, json.dumps(GOOD).encode())
    code, out, err = run(capsys, command, "demo-1")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: {history.history_file()}: skipped line 2 ({why}{warnings[0].split(why, 1)[1]}"]
    assert [r.job_id for r in history.records()] == ["older", "demo-1"]


def test_an_unknown_backend_is_reported_not_raised(run_dir, capsys):
    _history_lines(json.dumps({**GOOD, "job_id": "marsjob", "backend": "mars"}).encode())
    code, _, err = run(capsys, "status", "marsjob")
    assert code == 2
    assert "unknown backend 'mars'" in err and "error: job 'marsjob' is not in this machine's history" in err


def test_history_that_is_a_folder_is_a_warning_for_reads_and_writes(run_dir, capsys):
    path = history.history_file()
    path.unlink()
    path.mkdir()
    code, _, err = run(capsys, "status", "demo-1", "--backend", "local", "--region", "local")
    assert code == 0 and err.strip() == f"warning: {path}: cannot be read (Is a directory); its records are ignored"
    statefiles._warned.clear()  # a new command, a new process
    code, _, err = run(capsys, "status", "demo-1")
    assert code == 2
    assert f"warning: {path}: cannot be read" in err and len(err.strip().splitlines()) == 2
    history.record(history.JobRecord(**GOOD))  # a warning, not an error: the job exists anyway
    assert f"{path}: cannot record job demo-1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"job_id": "demo-1", "native_st', "not valid JSON"),
        (b"", "empty"),
        (b"\xff\xfe\x00{}", "not UTF-8"),
        (b"[]", "holds an array, not a JSON object"),
        (json.dumps({k: v for k, v in STATUS.items() if k != "native_state"}).encode(), "has no native_state"),
        (json.dumps({**STATUS, "native_state": "exploded"}).encode(), "unknown native_state"),
        (json.dumps({**STATUS, "details": 7}).encode(), "details is not an object"),
    ],
    ids=["truncated", "empty", "non-utf8", "list", "no-native-state", "bad-state", "bad-details"],
)
def test_a_damaged_status_file_is_one_line_for_status_and_logs_still_show(run_dir, capsys, content, problem):
    path = run_dir / "status.json"
    path.write_bytes(content)
    code, out, err = run(capsys, "status", "demo-1")
    assert code == 2
    assert err.strip().splitlines() == [err.strip()] and err.startswith(f"error: {os.path.relpath(path)}: ")
    assert problem in err
    code, out, err = run(capsys, "logs", "demo-1")
    assert code == 0 and "epoch 2" in out  # the log files are still there: show them
    assert [line for line in err.splitlines() if line.startswith("warning:")] == [err.strip()]
    assert problem in err


def test_a_damaged_status_file_is_skipped_by_list(run_dir, capsys):
    other = run_dir.parent.parent / "demo-2" / "local-run"
    other.mkdir(parents=True)
    (other / "status.json").write_text(json.dumps({**STATUS, "job_id": "demo-2"}))
    (run_dir / "status.json").write_bytes(b"{")
    code, out, err = run(capsys, "list", "--backend", "local", "--region", "local")
    assert code == 0 and "demo-2" in out and "demo-1" not in out
    assert "status.json: not valid JSON" in err and "skipped" in err


def test_unexpected_errors_are_one_line_without_debug(capsys, monkeypatch):
    from cloudtrain import catalog

    def broken(*_args, **_kwargs):
        raise RuntimeError("catalog exploded\nsecond line")

    monkeypatch.setattr(catalog, "machines", broken)
    code, _, err = run(capsys, "machines")
    assert code == 1
    assert err.splitlines()[0] == "error: unexpected RuntimeError: catalog exploded" and "--debug" in err
    with pytest.raises(RuntimeError):
        main(["machines", "--debug"])  # on the command, not only on the group


def test_every_command_takes_debug(capsys):
    from cloudtrain.cli import cli

    def commands(group, prefix=()):
        for name, cmd in group.commands.items():
            yield prefix + (name,), cmd
            if hasattr(cmd, "commands"):
                yield from commands(cmd, prefix + (name,))

    for path, cmd in commands(cli):
        assert any("--debug" in p.opts for p in cmd.params), path


@pytest.mark.slow
def test_concurrent_appends_never_tear_a_record(tmp_path):
    """Four processes append 300 records each at once: every line parses, none is lost."""
    script = (
        "import sys\n"
        "from cloudtrain import history\n"
        "for i in range(300):\n"
        "    history.record(history.JobRecord(f'{sys.argv[1]}-{i}', 'n' * 3000, 'local', 'local'))\n"
    )
    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(tmp_path)}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(n)], cwd=REPO, env=env) for n in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    lines = (tmp_path / "jobs.jsonl").read_bytes().splitlines()
    assert len(lines) == 1200
    assert sorted(json.loads(line)["job_id"] for line in lines) == sorted(f"{n}-{i}" for n in range(4) for i in range(300))
