"""The manual's exit-code table is the one the code uses: every row has a path that ends with it.

The table is read from the manual itself (docs/reference/exit-codes.md, through tests/docs_text.py);
``PATHS`` names, for each code, the tests below that drive a real command (or the one function
every command's end goes through) to that code.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap

import pytest

import cloudtrain.backends.vertex as vertex_module
from cloudtrain.cli import main
from cloudtrain.errors import ExitCode
from tests import docs_text
from tests.conftest import VERTEX_BASE

PATHS = {
    0: ["test_0_a_run_that_succeeds"],
    1: ["test_1_a_replica_that_fails_shows_its_own_code_and_exits_1"],
    2: ["test_2_bad_input_before_anything_runs"],
    3: ["test_3_the_cloud_does_not_answer_through_the_retries"],
    4: ["test_4_no_quota_for_the_job"],
    5: ["test_5_a_preempted_job"],
    124: ["test_124_max_runtime_on_every_backend"],
    130: ["test_130_ctrl_c_stops_a_local_run"],
}


def readme_exit_codes() -> dict[int, str]:
    return {int(m[1]): m[2] for m in re.finditer(r"^\| (\d+) \| (.+) \|$", docs_text.section("Exit codes"), re.M)}


def test_the_readme_table_is_errors_exitcode():
    table = readme_exit_codes()
    assert set(table) == {int(code) for code in ExitCode}, "README 'Exit codes' and errors.ExitCode differ"
    assert set(PATHS) == set(table), "every code in the README needs a path in PATHS"
    for names in PATHS.values():
        assert all(callable(globals().get(name)) for name in names), names


# --- the paths ------------------------------------------------------------------------------


@pytest.mark.slow
def test_0_a_run_that_succeeds(cli, chatty):
    config = chatty()
    result = cli("submit", str(config), cwd=config.parent)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_1_a_replica_that_fails_shows_its_own_code_and_exits_1(cli, chatty):
    # the trainer's argparse refuses a flag and exits 2: that is the job failing, not bad input to cloudtrain
    config = chatty(args="[--no-such-flag]")
    result = cli("submit", str(config), cwd=config.parent)
    assert result.returncode == ExitCode.JOB_FAILED, result.stderr
    assert "replica chief exited with code 2" in result.stderr


def test_2_bad_input_before_anything_runs(project, capsys):
    assert main(["validate", str(project(VERTEX_BASE + "replica_count: 0\n"))]) == ExitCode.BAD_INPUT
    assert main(["status", "1234"]) == ExitCode.BAD_INPUT  # not in history, no --backend
    assert main(["logs", "/nowhere/run", "--backend", "local", "--region", "x"]) == ExitCode.BAD_INPUT
    assert "Traceback" not in capsys.readouterr().err


@pytest.fixture
def vertex_config(tmp_path, backend, gcs, monkeypatch):
    monkeypatch.setattr(vertex_module, "BACKEND", backend)
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text("print('hi')\n")
    path = tmp_path / "vertex.yaml"
    path.write_text(textwrap.dedent(VERTEX_BASE))
    return path


@pytest.mark.slow
@pytest.mark.server
def test_3_the_cloud_does_not_answer_through_the_retries(vertex_config, jobs, capsys):
    jobs.create_faults.extend(["unavailable"] * 6)  # every attempt of the backoff
    assert main(["submit", str(vertex_config)]) == ExitCode.UNREACHABLE
    err = capsys.readouterr().err
    assert "kept answering" in err and "retries included" in err and "Traceback" not in err
    assert "the job may have been created" in err  # a lost answer must not read as "nothing happened"


@pytest.mark.slow
@pytest.mark.server
def test_4_no_quota_for_the_job(vertex_config, jobs, capsys):
    jobs.create_faults.extend(["quota"] * 6)
    assert main(["submit", str(vertex_config)]) == ExitCode.NO_CAPACITY
    assert "no quota" in capsys.readouterr().err


def test_5_a_preempted_job(capsys):
    """Every followed job ends in ``finish``: a PREEMPTED state exits 5 whichever backend saw it."""
    from cloudtrain.backends.base import JobState, JobStatus
    from cloudtrain.cli._follow import finish
    from cloudtrain.console import make_console
    from cloudtrain.errors import JobFailed

    status = JobStatus("7", "7", JobState.PREEMPTED, "PREEMPTED", message="spot capacity reclaimed")
    with pytest.raises(JobFailed) as info:
        finish(make_console(), status)
    assert info.value.exit_code == ExitCode.PREEMPTED and "spot capacity reclaimed" in str(info.value)


@pytest.mark.slow
def test_124_max_runtime_on_every_backend(cli, chatty):
    from google.cloud.aiplatform_v1.types import CustomJob

    from cloudtrain.backends.sagemaker.jobs import job_state
    from cloudtrain.backends.vertex.jobs import to_status

    config = chatty(args="[--sleep, '120']", extra="max_runtime: 3s\n")
    result = cli("submit", str(config), cwd=config.parent)
    assert result.returncode == ExitCode.TIMED_OUT, result.stderr
    assert "TIMED_OUT" in result.stdout
    assert job_state("Stopped", "MaxRuntimeExceeded").exit_code == ExitCode.TIMED_OUT
    timed_out = CustomJob(
        name="projects/p/locations/us-central1/customJobs/1",
        state="JOB_STATE_FAILED",
        error={"code": 4, "message": "Job exceeded its timeout"},
    )
    assert to_status(timed_out).state.exit_code == ExitCode.TIMED_OUT


@pytest.mark.slow
def test_130_ctrl_c_stops_a_local_run(chatty, cli_cache):
    import os

    config = chatty(args="[--sleep, '120']")
    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(cli_cache)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cloudtrain", "submit", str(config)],
        cwd=config.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if "Epoch 2/2" in line:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert "CANCELLED" in out
