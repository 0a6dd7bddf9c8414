"""Damaged local state (history, a local run's status.json) is one line and the right exit code, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from cloudtrain import history, statefiles
from cloudtrain.cli import main
from tests.conftest import REPO

GOOD: dict[str, Any] = {"job_id": "demo-1", "name": "cloudtrain-runs/demo-1", "backend": "local", "region": "local"}
STATUS = {
    "job_id": "demo-1",
    "name": "cloudtrain-runs/demo-1",
    "state": "SUCCEEDED",
    "native_state": "succeeded",
    "message": None,
    "console_url": None,
    "created": "2025-01-01T00:00:00+00:00",
    "ended": None,
    "details": {"replicas": ["worker-0"], "exit_code": 0},
}


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
    assert code == 0 and err == ""  # a lookup reads from the end: damage elsewhere is list's to report
    code, out, err = run(capsys, "list", "-o", "json")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: {history.history_file()}: skipped line 2 ({why}{warnings[0].split(why, 1)[1]}"]
    assert [r.job_id for r in history.records()] == ["older", "demo-1"]


def test_a_damaged_newer_line_of_the_job_is_one_warning_and_its_older_record_is_found(run_dir, capsys):
    _history_lines(json.dumps(GOOD).encode(), b'{"job_id": "demo-1", "name": "cloudtrain-runs/de')
    code, out, err = run(capsys, "status", "demo-1", "-o", "json")
    assert code == 0 and json.loads(out)["state"] == "SUCCEEDED"
    assert err.splitlines() == [
        f"warning: {history.history_file()}: skipped a line (not JSON); the other records are read"
    ]


def test_find_searching_backwards_gives_the_newest_record_of_each_job():
    """Backwards lookup agrees with reading the whole history forwards, for ids that are prefixes of
    others, a non-ASCII id, a name with quotes, and ids that are not there."""
    entries = [
        history.JobRecord(f"job-{n % 7}", f"/runs/job-{n % 7}", "local", "local", state=f"S{n}") for n in range(40)
    ] + [
        history.JobRecord("job-1-b", "/runs/x", "local", "local", state="b"),
        history.JobRecord("ünï", '/runs/"q"', "vertex", "r", state="last"),
    ]
    for entry in entries:
        history.record(entry)
    for job in {e.job_id for e in entries} | {e.name for e in entries}:
        newest = [e for e in history.records() if job in (e.job_id, e.name)][-1]
        assert history.find(job) == newest
    assert history.find("job-") is None and history.find("nope") is None


def test_find_in_an_empty_or_unterminated_history(capsys):
    path = history.history_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    assert history.find("demo-1") is None
    path.write_bytes(json.dumps(GOOD).encode())  # no newline at the end
    assert history.find("demo-1") == history.JobRecord(**GOOD)


def test_an_unknown_backend_is_reported_not_raised(run_dir, capsys):
    _history_lines(json.dumps({**GOOD, "job_id": "marsjob", "backend": "mars"}).encode())
    code, _, err = run(capsys, "status", "marsjob")
    assert code == 2
    assert "unknown backend 'mars'" in err and "error: job 'marsjob' is not in this machine's history" in err


def test_history_that_is_a_folder_is_a_warning_for_reads_and_writes(run_dir, capsys, monkeypatch, tmp_path_factory):
    path = history.history_file()
    path.unlink()
    path.mkdir()
    code, _, err = run(capsys, "status", "demo-1", "--backend", "local", "--region", "local")
    assert code == 0 and err.strip() == f"warning: {path}: cannot be read (Is a directory); its records are ignored"
    statefiles._warned.clear()  # a new command, a new process
    code, _, err = run(capsys, "status", "demo-1")  # inside its project, a run is found by its id alone
    assert code == 0 and err.strip() == f"warning: {path}: cannot be read (Is a directory); its records are ignored"
    statefiles._warned.clear()
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    code, _, err = run(capsys, "status", "demo-1")
    assert code == 2
    assert f"warning: {path}: cannot be read" in err and len(err.strip().splitlines()) == 2
    history.record(history.JobRecord(**GOOD))  # a warning, not an error: the job exists anyway
    assert f"{path}: cannot record job demo-1" in capsys.readouterr().err


DAMAGED_STATUS = [
    (b'{"job_id": "demo-1", "native_st', "not valid JSON, truncated? (line 1: Unterminated string starting at)"),
    (b"{", "not valid JSON, truncated? (line 1: Expecting property name enclosed in double quotes)"),
    (b"", "empty"),
    (b"\xff\xfe\x00{}", "not UTF-8 (byte 0)"),
    (b"[1,2]", "holds an array, not a JSON object"),
    (json.dumps({k: v for k, v in STATUS.items() if k != "native_state"}).encode(), "has no native_state"),
    (
        json.dumps({**STATUS, "native_state": "exploded"}).encode(),
        "damaged (ValueError: unknown native_state 'exploded')",
    ),
    (json.dumps({**STATUS, "details": 7}).encode(), "damaged (TypeError: details is not an object)"),
]
DAMAGE_IDS = ["truncated", "brace", "empty", "non-utf8", "list", "no-native-state", "bad-state", "bad-details"]


def _damage_line(run_dir, problem: str) -> str:
    folder = os.path.relpath(run_dir.parent)
    return (
        f"{os.path.relpath(run_dir / 'status.json')}: {problem} — remove the run folder {folder} "
        f"(its replicas' logs are {os.path.relpath(run_dir)}/*.log), or repair the file"
    )


@pytest.fixture
def two_runs(run_dir):
    """demo-1 (the one the tests damage) and a sound demo-2, both in history."""
    other = run_dir.parent.parent / "demo-2" / "local-run"
    other.mkdir(parents=True)
    (other / "status.json").write_text(json.dumps({**STATUS, "job_id": "demo-2", "name": "cloudtrain-runs/demo-2"}))
    history.record(history.JobRecord(**{**GOOD, "job_id": "demo-2", "name": "cloudtrain-runs/demo-2"}))
    return run_dir


@pytest.mark.parametrize(("content", "problem"), DAMAGED_STATUS, ids=DAMAGE_IDS)
@pytest.mark.parametrize("flags", [(), ("--backend", "local", "--region", "local")], ids=["history", "local"])
def test_list_shows_a_damaged_run_as_unknown_with_one_warning_and_every_other_run(
    two_runs, capsys, content, problem, flags
):
    (two_runs / "status.json").write_bytes(content)
    code, out, err = run(capsys, "list", *flags, "-o", "json")
    assert code == 0, err
    states = {job["job_id"]: job["state"] for job in json.loads(out)}
    assert states == {"demo-1": "UNKNOWN", "demo-2": "SUCCEEDED"}
    assert err.splitlines() == [f"warning: {_damage_line(two_runs, problem)}"]


def test_list_as_a_table_marks_the_damaged_run_unknown(two_runs, capsys):
    (two_runs / "status.json").write_bytes(b"{")
    code, out, err = run(capsys, "list")
    assert code == 0
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith("demo-")}
    assert rows["demo-1"][4] == "UNKNOWN" and rows["demo-2"][4] == "SUCCEEDED"
    assert len(err.splitlines()) == 1 and err.startswith("warning: ")


@pytest.mark.parametrize(("content", "problem"), DAMAGED_STATUS, ids=DAMAGE_IDS)
@pytest.mark.parametrize(
    "command",
    [
        ("status",),
        ("status", "-o", "json"),
        ("cancel",),
        ("logs",),
        ("logs", "-o", "json"),
        ("logs", "--follow"),
        ("report",),
    ],
)
def test_a_command_on_the_damaged_run_is_one_line_and_exit_2_and_other_runs_still_work(
    two_runs, capsys, content, problem, command
):
    (two_runs / "status.json").write_bytes(content)
    code, out, err = run(capsys, command[0], "demo-1", *command[1:])
    assert code == 2
    assert err.splitlines() == [f"error: {_damage_line(two_runs, problem)}"]
    if command[:2] in (("logs",), ("logs", "-o")):  # what the replicas wrote is still shown, before the error
        assert "epoch 2" in out
    statefiles._warned.clear()
    code, out, err = run(capsys, command[0], "demo-2", *command[1:])
    assert code == 0 or command[0] == "report" and "matplotlib" in err, err


def test_unexpected_errors_are_one_line_without_debug(capsys, monkeypatch):
    from cloudtrain import catalog

    def broken(*_args, **_kwargs):
        raise RuntimeError("catalog exploded\nsecond line")

    monkeypatch.setattr(catalog, "machines", broken)
    code, _, err = run(capsys, "machines")
    assert code == 1
    assert err.splitlines()[0] == "error: unexpected RuntimeError: catalog exploded" and "--debug" in err
    assert main(["machines", "--debug"]) == 1  # on the command, not only on the group
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "RuntimeError: catalog exploded" in err


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
    assert sorted(json.loads(line)["job_id"] for line in lines) == sorted(
        f"{n}-{i}" for n in range(4) for i in range(300)
    )


def _line(replica: str, message: str) -> bytes:
    return json.dumps(
        {"timestamp": "2025-01-01T00:00:01+00:00", "replica": replica, "message": message, "severity": "INFO"}
    ).encode()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"\x00\x13garbage\n" + _line("worker-0", "epoch 1") + b"\n", "skipped line 1 (not JSON)"),
        (_line("worker-0", "epoch 1") + b"\n" + _line("worker-0", "epoch 2")[:30], "skipped line 2 (not JSON)"),
        (
            b'{"timestamp": "yesterday", "replica": "worker-0", "message": "x", "severity": "INFO"}\n',
            "skipped line 1 (timestamp is not a time)",
        ),
        (
            b"[1, 2]\n" + b'{"replica": "worker-0"}\n',
            "skipped lines 1 (not a JSON object), 2 (no timestamp, message, severity)",
        ),
    ],
    ids=["garbage", "torn", "bad-time", "not-lines"],
)
def test_a_garbled_lines_file_says_so_and_logs_show_the_replicas_own_files(run_dir, capsys, content, problem):
    lines = run_dir / "lines.jsonl"
    lines.write_bytes(content)
    code, out, err = run(capsys, "logs", "demo-1")
    assert code == 0
    assert "epoch 1" in out and "epoch 2" in out  # worker-0.log, whole
    assert err.splitlines() == [
        f"warning: {os.path.relpath(lines)}: {problem} — the replicas' own log files hold "
        f"the same lines; showing the replicas' own log files in {os.path.relpath(run_dir)}"
    ]


def test_a_sound_lines_file_is_what_logs_show(run_dir, capsys):
    (run_dir / "lines.jsonl").write_bytes(_line("worker-0", "from the lines file") + b"\n")
    code, out, err = run(capsys, "logs", "demo-1", "-o", "json")
    assert code == 0 and err == ""
    assert [json.loads(line)["message"] for line in out.splitlines()] == ["from the lines file"]
