"""A local sweep's damaged journal breaks only that sweep: one line (file, bad line, how to recover),
exit 2 for a command on it, UNKNOWN in ``list``, the journal's bytes untouched by a refused resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cloudtrain import history, statefiles
from cloudtrain.app.sweeps import local
from cloudtrain.cli import main
from tests.sweeps.test_sweep_driver import ROOT, ScriptedBackend, _run, _spec, curve

STATUS = {
    "job_id": "demo-2",
    "name": "cloudtrain-runs/demo-2",
    "state": "SUCCEEDED",
    "native_state": "succeeded",
    "details": {"replicas": ["worker-0"]},
}


@pytest.fixture
def swept(tmp_path, monkeypatch):
    """A local sweep ``lr-sweep`` with two finished trials, and a sound local run ``demo-2``, both in history."""
    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path, max_trials=2, parallel_trials=1, algorithm="random")
    _run(spec, ScriptedBackend(curve))
    folder = local.sweep_dir_of(spec)
    local.write_state(
        folder,
        config=str(ROOT / "job_configs" / "sweep.yaml"),
        overrides=("backend=local", "sweep.max_trials=2", "sweep.seed=7"),
        job_name=spec.job_name,
        created="2025-01-01T00:00:00+00:00",
    )
    history.record(history.JobRecord(spec.job_name, str(folder), "local", "us-central1", kind="sweep"))
    run = tmp_path / "cloudtrain-runs" / "demo-2" / "local-run"
    run.mkdir(parents=True)
    (run / "status.json").write_text(json.dumps(STATUS))
    (run / "worker-0.log").write_text("epoch 1\n")
    history.record(history.JobRecord("demo-2", "cloudtrain-runs/demo-2", "local", "local"))
    statefiles._warned.clear()
    return folder / local.JOURNAL


def run(capsys, *args):
    statefiles._warned.clear()  # each command stands for a new process
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _recover(journal: Path, good: int) -> str:
    return (
        f"to resume from the {good} whole lines before it: head -n {good} {journal} > {journal}.good && "
        f"mv {journal}.good {journal}; or start a new sweep"
    )


def torn(journal: Path) -> str:
    good = len(journal.read_bytes().splitlines())
    journal.write_bytes(journal.read_bytes() + b'{"op_code": 6, "worker_id": "a-b", "trial_id": 1, "sta')
    return (
        f"line {good + 1} is torn (no end of line: the sweep was killed while writing it) — {_recover(journal, good)}"
    )


def garbage(journal: Path) -> str:
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:2] + [b"\x00\x00\xfe garbage\n"] + lines[3:]))
    return f"line 3 is not UTF-8 — {_recover(journal, 2)}"


def not_json(journal: Path) -> str:
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:3] + [b"{not json\n"] + lines[4:]))
    return f"line 4 is not JSON — {_recover(journal, 3)}"


def foreign(journal: Path) -> str:
    journal.write_bytes(b"[1, 2]\n" + journal.read_bytes())
    return (
        f"line 1 is not an Optuna record — no trial before it can be read; move it away (mv {journal} "
        f"{journal}.damaged) to start the sweep again"
    )


def unreplayable(journal: Path) -> str:
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[1:]))  # the study's creation is gone: its trials belong to no study
    return (
        f"holds no study 'lr-sweep' (its first records are missing) — move it away (mv {journal} "
        f"{journal}.damaged) to start the sweep again"
    )


DAMAGES = [torn, garbage, not_json, foreign, unreplayable]


@pytest.mark.parametrize("damage", DAMAGES, ids=[d.__name__ for d in DAMAGES])
@pytest.mark.parametrize(
    "command",
    [
        ("status", "lr-sweep"),
        ("sweep", "results", "lr-sweep"),
        ("logs", "lr-sweep"),
        ("report", "lr-sweep"),
        ("sweep", "resume", "lr-sweep"),
    ],
)
def test_a_command_on_a_sweep_with_a_damaged_journal_is_one_line_exit_2_and_writes_nothing(
    swept, capsys, damage, command
):
    expected = damage(swept)
    before = swept.read_bytes()
    code, _, err = run(capsys, *command)
    assert code == 2
    assert err.splitlines() == [f"error: {swept}: {expected}"]
    assert swept.read_bytes() == before  # never written to: a later repair starts from the same bytes
    code, out, err = run(capsys, "status", "demo-2", "-o", "json")  # every other job still works
    assert code == 0 and json.loads(out)["state"] == "SUCCEEDED"
    code, out, err = run(capsys, "logs", "demo-2")
    assert code == 0 and "epoch 1" in out and err == ""


@pytest.mark.parametrize("damage", DAMAGES, ids=[d.__name__ for d in DAMAGES])
def test_list_shows_the_damaged_sweep_as_unknown_and_the_other_jobs(swept, capsys, damage):
    expected = damage(swept)
    code, out, err = run(capsys, "list", "-o", "json")
    assert code == 0
    assert {j["job_id"]: j["state"] for j in json.loads(out)} == {"lr-sweep": "UNKNOWN", "demo-2": "SUCCEEDED"}
    assert len(err.splitlines()) == 1 and err.startswith(f"warning: {swept}: {expected}")


def test_a_sound_sweep_reads_back(swept, capsys):
    code, out, _ = run(capsys, "sweep", "results", "lr-sweep", "-o", "json")
    assert code == 0 and [t["state"] for t in json.loads(out)["trials"]] == ["COMPLETE", "COMPLETE"]


def test_a_0_byte_journal_left_by_a_kill_is_removed_and_the_sweep_has_no_trials_yet(swept, capsys):
    swept.write_bytes(b"")
    code, out, err = run(capsys, "sweep", "results", "lr-sweep", "-o", "json")
    assert code == 0, err
    table = json.loads(out)
    assert (table["state"], table["trials"]) == ("STOPPED", [])
    assert not swept.exists()
    code, out, _ = run(capsys, "list", "-o", "json")
    assert code == 0 and {j["job_id"]: j["state"] for j in json.loads(out)}["lr-sweep"] == "STOPPED: 0/2 trials"


def test_a_resume_after_a_0_byte_journal_starts_the_study_again(swept, tmp_path):
    swept.write_bytes(b"")
    spec = _spec(tmp_path, max_trials=2, parallel_trials=1, algorithm="random")
    backend = ScriptedBackend(curve)
    study, _ = _run(spec, backend)
    assert [t.state.name for t in study.trials] == ["COMPLETE", "COMPLETE"] and len(backend.runs) == 2


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "empty"),
        (b'{"config": "x', "not valid JSON, truncated? (line 1: Unterminated string starting at)"),
        (b"[]", "holds an array, not a JSON object"),
        (b'{"config": "x"}', "has no overrides, job_name"),
    ],
    ids=["empty", "torn", "list", "missing-keys"],
)
@pytest.mark.parametrize(
    "command", [("status", "lr-sweep"), ("sweep", "results", "lr-sweep"), ("sweep", "resume", "lr-sweep")]
)
def test_a_damaged_sweep_state_file_is_one_line_and_exit_2(swept, capsys, content, problem, command):
    state = swept.parent / local.STATE_FILE
    state.write_bytes(content)
    code, _, err = run(capsys, *command)
    assert code == 2
    assert err.splitlines() == [f"error: {state}: {problem} — the sweep cannot be resumed; start a new one"]
    code, out, err = run(capsys, "list", "-o", "json")
    assert code == 0 and {j["job_id"]: j["state"] for j in json.loads(out)} == {
        "lr-sweep": "UNKNOWN",
        "demo-2": "SUCCEEDED",
    }


def test_logs_of_a_sweep_with_one_damaged_trial_show_every_trial_and_one_warning(swept, capsys):
    for number, status in ((0, b"{"), (1, json.dumps({**STATUS, "job_id": "lr-sweep-t001"}).encode())):
        run_dir = swept.parent / f"trial-{number:03d}" / "local-run"
        run_dir.mkdir(parents=True)
        (run_dir / "status.json").write_bytes(status)
        (run_dir / "worker-0.log").write_text(f"line of trial {number}\n")
    code, out, err = run(capsys, "logs", "lr-sweep", "-o", "json")
    assert code == 0
    assert [(json.loads(line)["trial"], json.loads(line)["message"]) for line in out.splitlines()] == [
        ("0", "line of trial 0"),
        ("1", "line of trial 1"),
    ]
    damaged = swept.parent / "trial-000" / "local-run"
    assert err.splitlines() == [
        f"warning: {damaged / 'status.json'}: not valid JSON, truncated? (line 1: Expecting "
        f"property name enclosed in double quotes) — remove the run folder {damaged.parent} "
        f"(its replicas' logs are {damaged}/*.log), or repair the file"
    ]
