"""Two submits in the same second are two Vertex AI jobs with two display names and two output folders."""

from __future__ import annotations

import pytest

from cloudtrain import history
from cloudtrain.cli import main
from tests.concurrency import at_once

pytestmark = pytest.mark.server


@pytest.fixture
def config(cli_config):
    return cli_config


def test_same_second_submits_are_two_jobs_with_their_own_output_folders(config, jobs, capsys):
    def submit():
        return main(["submit", "--config", str(config), "--detach"])

    assert at_once(submit, submit) == [0, 0]
    created = list(jobs.jobs.values())
    assert len(created) == 2
    names = {j.display_name for j in created}
    outputs = {j.job_spec.base_output_directory.output_uri_prefix for j in created}
    assert len(names) == 2 and len(outputs) == 2
    assert outputs == {f"gs://my-bucket/cloudtrain/outputs/{n}" for n in names}
    assert sorted(r.job_id for r in history.recent(100)) == sorted(j.name.rsplit("/", 1)[1] for j in created)


def test_an_output_folder_the_user_names_is_used_as_given(config, jobs, capsys):
    """Resuming from a folder the user named can be intended: cloudtrain never renames it."""
    for _ in range(2):
        assert main(["submit", "--config", str(config), "--detach", "--set", "output_dir=gs://my-bucket/mine"]) == 0
    outputs = [j.job_spec.base_output_directory.output_uri_prefix for j in jobs.jobs.values()]
    assert outputs == ["gs://my-bucket/mine", "gs://my-bucket/mine"]
    assert len({j.display_name for j in jobs.jobs.values()}) == 2
