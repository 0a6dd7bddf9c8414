"""A Vertex create whose retries all run out is exit 3 with a hint to look for the job, never "refused"."""

from __future__ import annotations

import pytest

from cloudtrain.backends.vertex.retry import api_backoff
from cloudtrain.cli import main
from cloudtrain.errors import ExitCode

pytestmark = pytest.mark.server


def test_create_whose_retries_run_out_exits_3(cli_config, backend, jobs, capsys):
    attempts = api_backoff().attempts
    jobs.create_faults = ["unavailable"] * attempts
    code = main(["submit", "--config", str(cli_config)])
    err = capsys.readouterr().err
    assert code == ExitCode.UNREACHABLE == 3, err
    assert jobs.calls.count("create") == attempts and not jobs.jobs
    assert jobs.calls.count("list") == attempts - 1  # before each retry: did the lost attempt create it?
    line = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(line) == 1 and "creating the Vertex AI job: the service kept answering" in line[0]
    assert "refused" not in line[0] and "cloudtrain list --backend vertex --region us-central1" in line[0]


def test_create_that_goes_through_on_the_last_attempt_is_one_job(cli_config, backend, jobs, capsys):
    jobs.create_faults = ["unavailable"] * (api_backoff().attempts - 1)
    assert main(["submit", "--config", str(cli_config), "--detach"]) == 0
    assert len(jobs.jobs) == 1
