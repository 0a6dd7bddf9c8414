"""What a pipe, a script and a terminal get from the CLI: whole lines, one JSON document, no escape codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cloudtrain.cli import main
from tests.cli.conftest import on_terminal
from tests.conftest import REPO

CONTROL = ("\x1b", "\r", "\b")


def test_piped_tables_are_whole_tab_separated_rows(cli):
    result = cli("machines")
    lines = result.stdout.splitlines()
    header = lines[0].split("\t")
    assert header[:2] == ["cloud", "machine"] and all(len(line.split("\t")) == len(header) for line in lines)
    assert any("\tml.g4dn.12xlarge\t" in line for line in lines)  # `| grep g4dn` finds the rows, uncut
    assert any("\tn1-standard-16\t" in line and "\tT4\t1, 2, 4\t" in line for line in lines)  # the main job's
    assert "prices:" in result.stderr and "prices:" not in result.stdout  # the title is for people
    assert not any(c in result.stdout for c in CONTROL) and "…" not in result.stdout


def test_a_terminal_gets_the_drawn_table():
    shown = on_terminal("machines", "--gpu", "H100", columns=200)
    assert "a3-highgpu-8g" in shown and "│" in shown and "\x1b[" in shown  # drawn, styled
    assert "…" not in on_terminal("machines", "--gpu", "H100", columns=60)  # narrow: cells wrap, not cut


def test_a_closed_pipe_ends_quietly_with_0():
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudtrain", "machines", "-o", "json"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader (`| head -0`) is gone before the first write
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0 and err == ""


def test_json_is_one_document_on_stdout(capsys, tmp_path):
    config = str(REPO / "job_configs" / "cpu.yaml")
    for args in (
        ["validate", config, "-o", "json"],
        ["validate", "-c", config, "--output", "json"],
        ["machines", "--gpu", "A100", "-o", "json"],
        ["submit", config, "--dry-run", "-o", "json"],
        ["package", str(REPO / "trainer"), "--out", str(tmp_path), "-o", "json"],
    ):
        assert main(args) == 0, args
        out = capsys.readouterr().out
        json.loads(out)  # exactly one document: anything else on stdout would not parse
    assert main(["validate", config, "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["valid"] and data["machine_type"] == "n1-standard-4" and data["gpu_count"] == 0


def test_output_option_has_help(capsys):
    assert main(["validate", "--help"]) == 0
    assert "one JSON document on stdout" in capsys.readouterr().out


def test_config_is_positional_or_an_option_on_submit_and_validate(capsys):
    config = str(REPO / "job_configs" / "cpu.yaml")
    assert main(["validate", "--config", config]) == 0
    assert "CPU only, 1 replica" in capsys.readouterr().out  # words, not "0 × CPU × 1"
    assert main(["submit", config, "--dry-run", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["backend"] == "vertex"
    assert main(["submit", config, "--config", str(REPO / "job_configs" / "gpu4.yaml"), "--dry-run"]) == 2
    assert "two configs given" in capsys.readouterr().err


# --- a local two-replica run, looked at from elsewhere -----------------------------------------


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, cli_cache):
    """A finished two-replica run of the chatty package, submitted with -o json to a pipe."""
    from tests.cli.conftest import CHATTY

    folder = tmp_path_factory.mktemp("run")
    config = folder / "chatty.yaml"
    config.write_text(
        f"name: chatty\nbackend: local\ntarget: vertex\nregion: us-central1\n"
        f"machine: {{type: n1-standard-4}}\nreplica_count: 2\n"
        f"package: {{path: {CHATTY}, module: chatty_trainer.task}}\n"
    )
    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(cli_cache)}
    result = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "submit", str(config), "-o", "json"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return result


@pytest.mark.slow
def test_local_run_as_json_and_plain_text(finished_run):
    status = json.loads(finished_run.stdout)  # the run's end as one document; its lines went to stderr
    assert finished_run.returncode == 0 and status["state"] == "SUCCEEDED"
    err = finished_run.stderr
    assert f"Run {status['job_id']} started in {status['name']}" in err
    assert "2 processes here" in err and "(s)" not in err
    assert "chief      | 3/3 ━━━ - loss: 0.2500" in err.splitlines()  # Keras' bar, its last state, plain
    assert not any(c in err for c in CONTROL)
    assert "real warning from worker-0" in err  # real warnings stay
    assert "Could not find cuda drivers" not in err and "cuInit" not in err and "absl::InitializeLog" not in err


@pytest.mark.slow
def test_history_finds_the_local_run_from_anywhere(finished_run, cli, tmp_path):
    job = json.loads(finished_run.stdout)["job_id"]
    listed = json.loads(cli("list", "-o", "json", cwd=tmp_path).stdout)
    assert [(j["job_id"], j["backend"], j["state"]) for j in listed if j["job_id"] == job] == [
        (job, "local", "SUCCEEDED")
    ]
    plain = cli("list", cwd=tmp_path).stdout.splitlines()
    assert plain[0].split("\t")[:5] == ["job", "kind", "backend", "region", "state"] and any(
        job in line for line in plain
    )
    assert job not in cli("list", "--backend", "vertex", "-o", "json", cwd=tmp_path).stdout
    status = cli("status", job, "-o", "json", cwd=tmp_path)
    assert json.loads(status.stdout)["state"] == "SUCCEEDED"
    assert cli("cancel", job, cwd=tmp_path).returncode == 0  # ended already: says so, stays SUCCEEDED


@pytest.mark.slow
def test_logs_of_a_finished_run_interleave_by_time(finished_run, cli, tmp_path):
    job = json.loads(finished_run.stdout)["job_id"]
    lines = [json.loads(line) for line in cli("logs", job, "-o", "json", cwd=tmp_path).stdout.splitlines()]
    stamps = [line["timestamp"] for line in lines]
    assert stamps == sorted(stamps) and len(set(stamps)) > len(stamps) // 2  # each line its own time
    epochs = [line["replica"] for line in lines if line["message"].startswith("Epoch ")]
    assert sorted(epochs) == ["chief", "chief", "worker-0", "worker-0"]
    assert epochs.index("worker-0") < len(epochs) - 1 - epochs[::-1].index("chief")  # not grouped by replica
    severity = {line["message"].split("]")[-1].strip(): line["severity"] for line in lines}
    assert severity["a real warning from chief"] == "WARNING"
    assert {line["severity"] for line in lines if "cuInit" in line["message"]} == {"DEBUG"}
    text = cli("logs", job, cwd=tmp_path).stdout
    assert "a real warning from chief" in text and "cuInit" not in text
    assert "cuInit" in cli("--debug", "logs", job, cwd=tmp_path).stdout
