"""`cloudtrain submit` for Vertex through the CLI: streaming, exit codes, Ctrl-C detach / cancel, reattach.

The registered backend is swapped for one on the fakes and a virtual clock (the SDK edge);
everything above it — config, spec, package, CLI — is the real path.
"""

from __future__ import annotations

import json
import textwrap

import pytest

import cloudtrain.backends.vertex as vertex_module
from cloudtrain.cli import main
from tests.fakes.vertex_jobs import Script

pytestmark = pytest.mark.server

JOB = "1000"  # the fake numbers jobs from 1000
CONFIG = """\
name: mnist-cli
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
machine: {type: n1-standard-8, accelerator: NVIDIA_TESLA_T4, accelerator_count: 1}
package: {path: trainer}
"""


@pytest.fixture
def config(tmp_path, backend, gcs, monkeypatch):
    monkeypatch.setattr(vertex_module, "BACKEND", backend)
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text("print('hi')\n")
    path = tmp_path / "vertex.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    return path


def interrupt_after(backend, calls: int):
    """Ctrl-C arrives during the ``calls``-th wait of the log follower."""
    real, count = backend.sleep, {"n": 0}

    def sleep(seconds):
        count["n"] += 1
        if count["n"] == calls:
            raise KeyboardInterrupt
        real(seconds)

    backend.sleep = sleep


def test_streams_each_replica_line_and_exits_zero(config, jobs, logging_fake, clock, capsys):
    jobs.scripts.append(Script(timeline=[(0, "PENDING"), (10, "RUNNING"), (60, "SUCCEEDED")]))
    for i in range(3):
        logging_fake.add(JOB, "workerpool0-0", f"epoch {i}", at=clock.time() + 15 + i)
    code = main(["submit", "--config", str(config)])
    out = capsys.readouterr().out
    assert code == 0
    assert f"Job {JOB} created: https://console.cloud.google.com/vertex-ai/locations/us-central1/training/{JOB}" in out
    assert [line for line in out.splitlines() if line.startswith("workerpool0-0")] == [
        f"workerpool0-0 | epoch {i}" for i in range(3)
    ]
    assert f"Job {JOB}: SUCCEEDED" in out


def test_failed_job_prints_its_error_and_exits_one(config, jobs, capsys):
    jobs.scripts.append(Script(states=["PENDING", "RUNNING", "FAILED"], error="exit status 1: OOM"))
    code = main(["submit", "--config", str(config)])
    err = capsys.readouterr().err
    assert code == 1 and err.strip().splitlines()[-1] == f"error: job {JOB} ended FAILED: exit status 1: OOM"


def test_ctrl_c_detaches_leaves_the_job_running_and_reattach_follows_it(
    config, backend, jobs, logging_fake, clock, capsys
):
    jobs.scripts.append(Script(timeline=[(0, "RUNNING"), (120, "SUCCEEDED")]))
    logging_fake.add(JOB, "workerpool0-0", "after reattach", at=clock.time() + 30)
    interrupt_after(backend, 2)
    code = main(["submit", "--config", str(config)])
    out = capsys.readouterr().out
    assert code == 130
    assert "keeps running" in out and f"cloudtrain cancel {JOB}" in out
    assert (
        f"reattach: cloudtrain logs {JOB} --follow --backend vertex --region us-central1 --project my-project\n" in out
    )
    assert jobs.jobs[JOB].state.name == "JOB_STATE_RUNNING"  # not cancelled
    assert "cancel" not in jobs.calls

    backend.sleep = clock.sleep
    code = main(["logs", JOB, "--follow"])  # the short id is found in this machine's history
    out = capsys.readouterr().out
    assert code == 0 and "workerpool0-0 | after reattach" in out and f"Job {JOB}: SUCCEEDED" in out


def test_cancel_on_interrupt_cancels_and_waits(config, backend, jobs, capsys):
    jobs.scripts.append(Script(timeline=[(0, "RUNNING"), (3600, "SUCCEEDED")]))
    interrupt_after(backend, 2)
    code = main(["submit", "--config", str(config), "--cancel-on-interrupt"])
    captured = capsys.readouterr()
    assert code == 130
    assert "cancel" in jobs.calls and f"Job {JOB}: CANCELLED" in captured.out


def test_status_cancel_and_list(config, backend, jobs, capsys):
    jobs.scripts.append(Script(timeline=[(0, "RUNNING"), (3600, "SUCCEEDED")]))
    assert main(["submit", "--config", str(config), "--detach"]) == 0
    capsys.readouterr()
    assert main(["status", JOB, "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["state"] == "RUNNING"
    assert main(["cancel", JOB]) == 0
    assert f"Job {JOB}: CANCELLED" in capsys.readouterr().out
    name = f"projects/my-project/locations/us-central1/customJobs/{JOB}"
    assert main(["status", name, "-o", "json"]) == 0  # a full resource name needs no history
    assert json.loads(capsys.readouterr().out)["state"] == "CANCELLED"
    assert (
        main(["list", "--backend", "vertex", "--region", "us-central1", "--project", "my-project", "-o", "json"]) == 0
    )
    assert [j["job_id"] for j in json.loads(capsys.readouterr().out)] == [JOB]


def test_drain_takes_a_duration_and_a_bad_one_is_one_line_exit_2(config, jobs, logging_fake, clock, capsys):
    jobs.scripts.append(Script(timeline=[(0, "RUNNING"), (30, "SUCCEEDED")]))
    logging_fake.add(JOB, "workerpool0-0", "late by 4 min", at=clock.time() + 20, readable=clock.time() + 30 + 240)
    assert main(["submit", "--config", str(config), "--drain", "1m"]) == 0
    captured = capsys.readouterr()
    assert "late by 4 min" not in captured.out
    assert (
        f"no new lines for 60 s after the job ended; stopped following. Lines that arrive later: cloudtrain logs {JOB}"
        in captured.err
    )
    assert main(["logs", JOB, "--follow", "--drain", "5m"]) == 0
    assert "workerpool0-0 | late by 4 min" in capsys.readouterr().out
    assert main(["logs", JOB, "--follow", "--drain", "soon"]) == 2
    assert "'soon' is not a duration; use e.g. 90s, 2m, 1m30s or 1h" in capsys.readouterr().err
