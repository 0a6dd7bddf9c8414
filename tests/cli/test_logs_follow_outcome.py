"""``cloudtrain logs JOB --follow`` exits with the job's outcome, in text and in ``-o json``.

The exit-code table (docs/reference/exit-codes.md) row by row, through ``logs --follow`` of a job that ended that way:
a real local run (its own process, its run folder), a Vertex job on the fake JobService, a
SageMaker job on moto. With ``-o json`` stdout stays JSON Lines (one object per log line) and the
outcome is the exit code and one ``error:`` line on stderr, exactly as in text mode.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap

import pytest

import cloudtrain.backends.vertex as vertex_module
from cloudtrain.cli import main
from cloudtrain.errors import ExitCode
from tests.fakes.aws import LogWriter
from tests.fakes.vertex_jobs import Script

MODES = [(), ("-o", "json")]


def json_lines(out: str) -> list[dict]:
    """Every stdout line is one JSON object (JSON Lines), none of them the summary."""
    return [json.loads(line) for line in out.splitlines()]


def job_of(out: str) -> str:
    """The run id from submit's ``Job <id>: STATE`` line."""
    return next(line.split()[1].rstrip(":") for line in out.splitlines() if line.startswith("Job "))


# --- local: real runs of the chatty package ----------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "extra", "code", "state"),
    [
        ("[]", "", ExitCode.OK, "SUCCEEDED"),
        ("[--exit, '3']", "", ExitCode.JOB_FAILED, "FAILED"),
        ("[--exit, '5']", "", ExitCode.PREEMPTED, "PREEMPTED"),  # a replica that saved and exited 5 on its own
        ("[--sleep, '120']", "max_runtime: 3s\n", ExitCode.TIMED_OUT, "TIMED_OUT"),
    ],
    ids=["0-succeeded", "1-failed", "5-preempted", "124-timed-out"],
)
def test_local_run_logs_follow_exits_with_its_outcome_in_both_modes(cli, chatty, args, extra, code, state):
    config = chatty(args=args, extra=extra)
    submitted = cli("submit", str(config), cwd=config.parent)
    assert submitted.returncode == code, submitted.stderr
    job = job_of(submitted.stdout)
    text = cli("logs", job, "--follow", cwd=config.parent)
    assert text.returncode == code, text.stderr
    assert f"Job {job}: {state}" in text.stdout
    as_json = cli("logs", job, "--follow", "-o", "json", cwd=config.parent)
    assert as_json.returncode == code, as_json.stderr
    records = json_lines(as_json.stdout)
    assert any(r["message"] == "Epoch 2/2 on chief" for r in records)
    if code:
        assert as_json.stderr.strip().splitlines()[-1] == text.stderr.strip().splitlines()[-1]
        assert as_json.stderr.strip().splitlines()[-1].startswith(f"error: job {job} ended {state}")


@pytest.mark.slow
def test_local_run_cancelled_by_ctrl_c_logs_follow_exits_130_in_both_modes(cli, chatty, cli_cache):
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
    seen = []
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.append(line)
        if "Epoch 2/2" in line:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    job = job_of("".join(seen) + out)
    for mode in MODES:
        result = cli("logs", job, "--follow", *mode, cwd=config.parent)
        assert result.returncode == ExitCode.INTERRUPTED, (mode, result.stderr)
        assert result.stderr.strip().splitlines()[-1].startswith(f"error: job {job} ended CANCELLED")


# --- Vertex AI: the fake JobService and Cloud Logging ------------------------------------------


@pytest.fixture
def vertex(backend, monkeypatch):
    monkeypatch.setattr(vertex_module, "BACKEND", backend)
    return ["--backend", "vertex", "--region", "us-central1", "--project", "p"]


@pytest.mark.server
@pytest.mark.parametrize(
    ("script", "code", "ending"),
    [
        (Script(timeline=[(0, "RUNNING"), (30, "SUCCEEDED")]), ExitCode.OK, None),
        (
            Script(timeline=[(0, "RUNNING"), (30, "FAILED")], error="exit status 3"),
            ExitCode.JOB_FAILED,
            "FAILED: exit status 3",
        ),
        (
            Script(timeline=[(0, "RUNNING"), (30, "FAILED")], error="Job exceeded its timeout", error_code=4),
            ExitCode.TIMED_OUT,
            "TIMED_OUT: Job exceeded its timeout",
        ),
        (Script(timeline=[(0, "RUNNING"), (30, "CANCELLED")]), ExitCode.INTERRUPTED, "CANCELLED"),
    ],
    ids=["0-succeeded", "1-failed", "124-timed-out", "130-cancelled"],
)
@pytest.mark.parametrize("mode", MODES, ids=["text", "json"])
def test_vertex_job_logs_follow_exits_with_its_outcome(
    vertex,
    jobs,
    logging_fake,
    clock,
    capsys,
    script,
    code,
    ending,
    mode,
):
    job = jobs.start(script)
    logging_fake.add(job, "workerpool0-0", "epoch 1", at=clock.time() + 5)
    assert main(["logs", job, "--follow", "--drain", "0", *vertex, *mode]) == code
    captured = capsys.readouterr()
    if mode:
        assert [(r["replica"], r["message"]) for r in json_lines(captured.out)] == [("workerpool0-0", "epoch 1")]
    else:
        assert re.search(r"^workerpool0-0 +\| epoch 1$", captured.out, re.M)
    if ending:
        assert captured.err.strip().splitlines()[-1].startswith(f"error: job {job} ended {ending}")


# --- SageMaker: moto and CloudWatch Logs -------------------------------------------------------

SAGEMAKER = """\
name: mnist-sm
backend: sagemaker
region: eu-west-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://cloudtrain-cli
machine: {type: ml.g4dn.12xlarge}
package: {path: trainer}
"""


@pytest.fixture
def sagemaker_job(tmp_path, aws, capsys):
    """A job submitted to moto with --detach; returns its name."""
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text("print('hi')\n")
    aws.client("s3", "eu-west-1").create_bucket(
        Bucket="cloudtrain-cli", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
    )
    config = tmp_path / "sm.yaml"
    config.write_text(textwrap.dedent(SAGEMAKER))
    assert main(["submit", "--config", str(config), "--detach"]) == 0
    job = capsys.readouterr().out.split("Job ", 1)[1].split()[0]
    writer = LogWriter(aws.client("logs", "eu-west-1"), job)
    writer.write(writer.open(1), ["step 1"])
    return job


@pytest.mark.server
@pytest.mark.parametrize(
    ("status", "code", "ending"),
    [
        (("Completed", None, None), ExitCode.OK, None),
        (("Failed", None, "AlgorithmError: exit 3"), ExitCode.JOB_FAILED, "FAILED: AlgorithmError: exit 3"),
        (("Stopped", "MaxRuntimeExceeded", None), ExitCode.TIMED_OUT, "TIMED_OUT"),
        (("Stopped", "Stopped", None), ExitCode.INTERRUPTED, "CANCELLED"),
    ],
    ids=["0-completed", "1-failed", "124-max-runtime", "130-stopped"],
)
@pytest.mark.parametrize("mode", MODES, ids=["text", "json"])
def test_sagemaker_job_logs_follow_exits_with_its_outcome(aws, sagemaker_job, capsys, status, code, ending, mode):
    state, secondary, reason = status
    aws.set_job("eu-west-1", sagemaker_job, state, secondary, failure_reason=reason)
    assert main(["logs", sagemaker_job, "--follow", *mode]) == code
    captured = capsys.readouterr()
    if mode:
        assert [(r["replica"], r["message"]) for r in json_lines(captured.out)] == [("algo-1", "step 1")]
    else:
        assert re.search(r"^algo-1 +\| step 1$", captured.out, re.M)
    if ending:
        assert captured.err.strip().splitlines()[-1].startswith(f"error: job {sagemaker_job} ended {ending}")
