"""Where a job is (cloudtrain/app/locate.py), as ``status``/``logs``/``cancel`` and ``cloudtrain.attach`` find it:
flags first, then ``--config``, then a full job name, then this machine's history; and a listed job's state."""

from __future__ import annotations

import json

import pytest

from cloudtrain import history
from cloudtrain.app.locate import Location, locate
from cloudtrain.backends import get_backend
from cloudtrain.errors import UsageError
from cloudtrain.history import JobRecord
from tests.conftest import REPO

GPU4 = str(REPO / "job_configs" / "gpu4.yaml")  # vertex, us-central1, my-project
VERTEX_NAME = "projects/p-1/locations/europe-west4/customJobs/123"
SAGEMAKER_ARN = "arn:aws:sagemaker:eu-west-1:123456789012:training-job/demo-1"


def test_the_config_gives_backend_region_and_project() -> None:
    assert locate("42", config_path=GPU4) == Location(get_backend("vertex"), "42", "us-central1", "my-project")


def test_flags_win_over_the_config_and_a_config_is_not_read_when_they_suffice(tmp_path) -> None:
    assert locate("42", "vertex", "asia-east1", "flag-project", GPU4) == Location(
        get_backend("vertex"), "42", "asia-east1", "flag-project"
    )
    missing = str(tmp_path / "nope.yaml")  # read, it would be an error
    assert locate("42", "vertex", "asia-east1", None, missing).region == "asia-east1"
    assert locate("42", "vertex", None, None, GPU4).region == "us-central1"  # only what the flags lack


def test_a_full_job_name_carries_its_own_location() -> None:
    assert locate(VERTEX_NAME) == Location(get_backend("vertex"), "123", "europe-west4", "p-1")
    assert locate(SAGEMAKER_ARN) == Location(get_backend("sagemaker"), "demo-1", "eu-west-1", None)
    assert locate(VERTEX_NAME, region="us-east1").region == "europe-west4"  # the name's location wins


def test_history_gives_a_short_ids_location_and_flags_still_win() -> None:
    history.record(JobRecord("777", "projects/h/locations/us-west1/customJobs/777", "vertex", "us-west1", "h"))
    assert locate("777") == Location(get_backend("vertex"), "777", "us-west1", "h")
    assert locate("777", region="us-east4", project="other") == Location(
        get_backend("vertex"), "777", "us-east4", "other"
    )


def test_a_local_run_is_found_by_its_recorded_folder_from_anywhere(tmp_path) -> None:
    folder = tmp_path / "runs" / "demo-1"
    history.record(JobRecord("demo-1", str(folder), "local", "local"))
    assert locate("demo-1") == Location(get_backend("local"), str(folder), "local", None)


def test_without_a_backend_or_a_region_it_says_which_flags_to_pass() -> None:
    with pytest.raises(UsageError) as unknown:
        locate("1234")
    assert str(unknown.value) == (
        "job '1234' is not in this machine's history — pass --backend and --region (or --config CONFIG)"
    )
    with pytest.raises(UsageError) as nothing:
        locate(None, backend="vertex")
    assert str(nothing.value) == "no backend or region given — pass --backend and --region (or --config CONFIG)"
    assert locate(None, "vertex", "us-central1") == Location(get_backend("vertex"), "", "us-central1", None)


def test_a_local_runs_folder_is_found_by_itself_with_the_flags_passed_through(tmp_path) -> None:
    folder = tmp_path / "demo-3"
    (folder / "local-run").mkdir(parents=True)
    (folder / "local-run" / "status.json").write_text(json.dumps({"job_id": "demo-3", "native_state": "running"}))
    assert locate(str(folder)) == Location(get_backend("local"), str(folder), "", None)
    assert locate(str(folder), region="here", project="p") == Location(get_backend("local"), str(folder), "here", "p")


def test_a_backend_flag_is_not_overridden_by_history() -> None:
    history.record(JobRecord("778", "projects/h/locations/us-west1/customJobs/778", "vertex", "us-west1", "h"))
    assert locate("778", "sagemaker", "eu-west-1") == Location(get_backend("sagemaker"), "778", "eu-west-1", None)


def test_what_a_name_or_a_record_does_not_carry_comes_from_the_flags() -> None:
    assert locate(SAGEMAKER_ARN, project="flag-project").project == "flag-project"  # an ARN names no project
    history.record(JobRecord("demo-4", "/runs/demo-4", "local", "local"))
    assert locate("demo-4", project="flag-project").project == "flag-project"
    assert locate(None, "local") == Location(get_backend("local"), "", "", None)  # no region needed, none made up
