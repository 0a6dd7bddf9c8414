"""``cloudtrain.submit`` against the Vertex AI fakes: it returns as soon as the job is created (the
virtual clock has not moved, the job is still queued), the handle follows, waits, cancels, and a
job is found again by its id, all without printing."""

from __future__ import annotations

import logging
import textwrap

import pytest

import cloudtrain
import cloudtrain.backends.vertex as vertex_module
from cloudtrain import history
from cloudtrain.backends.base import JobState
from tests.fakes.vertex_jobs import Script

pytestmark = pytest.mark.server

JOB = "1000"  # the fake numbers jobs from 1000
CONFIG = """\
name: mnist-api
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
machine: {type: n1-standard-8, accelerator: NVIDIA_TESLA_T4, accelerator_count: 1}
package: {path: trainer}
"""


@pytest.fixture(autouse=True)
def fresh_process_logging(monkeypatch):
    """As in a notebook: no handler that an earlier CLI run in this test process left on the logger."""
    monkeypatch.setattr(logging.getLogger("cloudtrain"), "handlers", [logging.NullHandler()])


@pytest.fixture
def config(tmp_path, backend, gcs, monkeypatch):
    monkeypatch.setattr(vertex_module, "BACKEND", backend)
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text("print('hi')\n")
    path = tmp_path / "vertex.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    return cloudtrain.load_config(path)


def test_submit_returns_at_once_and_the_handle_follows_to_the_end(config, jobs, logging_fake, clock, capsys):
    jobs.scripts.append(Script(timeline=[(0, "PENDING"), (10, "RUNNING"), (60, "SUCCEEDED")]))
    for i in range(3):
        logging_fake.add(JOB, "workerpool0-0", f"epoch {i}", at=clock.time() + 15 + i)
    started = clock.time()
    job = cloudtrain.submit(config)
    assert clock.time() == started  # nothing waited on, nothing followed
    assert (job.job_id, job.status().state) == (JOB, JobState.PENDING)
    recorded = history.find(JOB)
    assert recorded is not None and recorded.region == "us-central1"  # the CLI's `cloudtrain logs 1000` finds it
    assert [line.message for line in job.logs(follow=True)] == ["epoch 0", "epoch 1", "epoch 2"]
    assert job.wait().state is JobState.SUCCEEDED
    saved = history.load_run(JOB)
    assert saved is not None and saved["status"]["state"] == "SUCCEEDED"
    assert cloudtrain.attach(JOB).status().state is JobState.SUCCEEDED  # the short id, from history
    name = f"projects/my-project/locations/us-central1/customJobs/{JOB}"
    assert cloudtrain.attach(name).job_id == JOB  # the full resource name, as the CLI takes it
    assert capsys.readouterr() == ("", "")


def test_cancel_through_the_handle(config, jobs, clock):
    jobs.scripts.append(Script(timeline=[(0, "RUNNING"), (3600, "SUCCEEDED")]))
    job = cloudtrain.submit(config)
    job.cancel()
    assert "cancel" in jobs.calls
    assert job.wait().state is JobState.CANCELLED
