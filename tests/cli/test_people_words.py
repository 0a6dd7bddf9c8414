"""Output for people: ``accelerator: T4`` alone means one; a Ctrl-C that ends a command says how to resume;
``status`` of a local run shows its phases and its fields in words and units, ``-o json`` the machine names."""

from __future__ import annotations

import json
import textwrap

import pytest

from cloudtrain.cli import listing, main
from cloudtrain.config.load import load_config
from cloudtrain.errors import ExitCode


@pytest.mark.parametrize(("count", "expected"), [(None, 1), (2, 2), (0, None)])
def test_an_accelerator_named_without_a_count_is_one(project, count, expected) -> None:
    extra = "" if count is None else f", accelerator_count: {count}"
    path = project(
        textwrap.dedent(f"""\
        name: t4
        backend: vertex
        region: europe-west4
        project: p
        staging_bucket: gs://b
        machine: {{type: n1-standard-8, accelerator: NVIDIA_TESLA_T4{extra}}}
        package: {{path: trainer, module: trainer.task}}
        """)
    )
    if expected is None:  # a count written, even 0, is the user's: refused as before, in one line
        with pytest.raises(Exception, match="accelerator_count"):
            load_config(path)
        return
    assert load_config(path).config.machine.accelerator_count == expected


def test_a_ctrl_c_that_ends_a_command_says_how_to_resume(monkeypatch, capsys) -> None:
    def interrupted(*args, **kwargs):  # a Ctrl-C while the history is read
        raise KeyboardInterrupt

    monkeypatch.setattr(listing, "listed", interrupted)
    assert main(["list"]) == ExitCode.INTERRUPTED
    err = capsys.readouterr().err.strip()
    assert err.startswith("Interrupted. Run the same command again to resume")
    assert len(err.splitlines()) == 1


def test_status_of_a_local_run_in_words_with_its_phases(tmp_path, monkeypatch, capsys) -> None:
    folder = tmp_path / "cloudtrain-runs" / "words-1"
    (folder / "local-run").mkdir(parents=True)
    details = {
        "wall_time_s": 17.712,
        "uploads_outputs": False,
        "replicas": ["chief"],
        "environment_cached": False,
        "metrics": {"val_accuracy": 0.981234567},
        "output_dir": str(folder),
    }
    status = {
        "job_id": "words-1",
        "name": str(folder),
        "native_state": "succeeded",
        "created": "2026-12-01T10:00:00+00:00",
        "ended": "2026-12-01T10:00:40+00:00",
        "details": details,
    }
    (folder / "local-run" / "status.json").write_text(json.dumps(status))
    line = {"timestamp": "2026-12-01T10:00:25+00:00", "replica": "chief", "severity": "INFO"}
    event = json.dumps({"event": "epoch", "epoch": 1, "loss": 0.5})
    (folder / "local-run" / "lines.jsonl").write_text(json.dumps({**line, "message": event}) + "\n")
    monkeypatch.chdir(tmp_path)
    assert main(["status", "cloudtrain-runs/words-1"]) == ExitCode.OK
    rows = dict(r.split(": ", 1) for r in capsys.readouterr().out.splitlines()[1:])
    assert rows["wall time"] == "17.7 s" and rows["uploads outputs"] == "no" and rows["replicas"] == "1 (chief)"
    assert rows["environment cached"] == "no" and rows["metrics.val_accuracy"] == "0.9812"
    assert rows["created"] == "2026-12-01 10:00:00 UTC"
    assert rows["phases"] == "starting TensorFlow 25 s · training 15 s"
    assert main(["status", "cloudtrain-runs/words-1", "-o", "json"]) == ExitCode.OK
    data = json.loads(capsys.readouterr().out)
    assert data["details"]["wall_time_s"] == 17.712 and data["details"]["uploads_outputs"] is False
    assert data["details"]["metrics"]["val_accuracy"] == 0.981234567
    assert [p["phase"] for p in data["phases"]] == ["starting TensorFlow", "training"]
