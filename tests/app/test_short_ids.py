"""Short ids wherever a job id is taken (cloudtrain/history.py::expand, the CLI's JOB arguments, the API's
attach): ``last``, a unique prefix or suffix of an id in this machine's history; several matches are one line
naming them; a near miss offers the nearest ids of the history, not flags."""

from __future__ import annotations

import pytest

from cloudtrain import history
from cloudtrain.app.locate import locate
from cloudtrain.cli import main
from cloudtrain.errors import ExitCode, UsageError
from cloudtrain.history import JobRecord

IDS = ("train-20261201-101500-egwovd", "train-20261201-103000-kq2zpa", "sweep-20261201-110000-mmx81b")


@pytest.fixture
def jobs() -> list[str]:
    for job_id in IDS:
        name = f"projects/p/locations/europe-west4/customJobs/{job_id}"
        history.record(JobRecord(job_id, name, "vertex", "europe-west4", "p", state="RUNNING"))
    first = f"projects/p/locations/europe-west4/customJobs/{IDS[0]}"
    history.record(JobRecord(IDS[0], first, "vertex", "europe-west4", "p", state="SUCCEEDED"))  # its end, later
    history.record(
        JobRecord("trial-1", "projects/p/locations/europe-west4/customJobs/t", "vertex", "europe-west4", kind="trial")
    )
    return list(IDS)


def test_last_a_prefix_and_a_suffix_name_one_job(jobs) -> None:
    assert history.expand("last") == "sweep-20261201-110000-mmx81b"  # the newest record (a trial is no job id)
    assert history.expand("egwovd") == jobs[0]  # its suffix
    assert history.expand("-kq2zpa") == jobs[1]
    assert history.expand("sweep-") == jobs[2]  # its prefix
    assert history.expand(jobs[1]) == jobs[1]  # a full id as it is
    assert history.expand("projects/x/locations/y/customJobs/1") == "projects/x/locations/y/customJobs/1"
    assert locate("egwovd").job_id == jobs[0] and locate("egwovd").region == "europe-west4"  # the API's way in


def test_an_ambiguous_id_names_the_candidates_in_one_line(jobs, capsys) -> None:
    with pytest.raises(UsageError) as raised:
        history.expand("train-20261201")
    assert str(raised.value) == (f"'train-20261201' matches 2 jobs: {jobs[1]}, {jobs[0]} — give more of the id")
    assert main(["status", "train-"]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "matches 2 jobs" in err[0]


def test_a_near_miss_offers_the_nearest_ids_not_flags(jobs, capsys) -> None:
    typo = "train-20261201-101500-egwovb"
    assert history.nearest(typo)[0] == jobs[0]
    assert main(["status", typo]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert f"did you mean {jobs[0]}" in err and "--backend" not in err
    assert main(["status", "zzzzzzzzzzzz"]) == ExitCode.BAD_INPUT  # nothing near: where to look instead
    assert "--backend and --region" in capsys.readouterr().err


def test_last_with_an_empty_history_is_one_line(capsys) -> None:
    assert main(["logs", "last"]) == ExitCode.BAD_INPUT
    assert "'last' names the newest job in this machine's history, and it has none" in capsys.readouterr().err


def test_list_of_an_unknown_experiment_names_the_known_ones(capsys) -> None:
    for job_id, experiment in (("a-1", "lr-study"), ("b-1", "batch-size")):
        history.record(
            JobRecord(job_id, f"projects/p/locations/r/customJobs/{job_id}", "vertex", "r", experiment=experiment)
        )
    assert main(["list", "--experiment", "lr-studdy"]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "no jobs of experiment 'lr-studdy'" in err and "batch-size, lr-study" in err
