"""One report folder per report: ``cloudtrain report A B C`` writes into a folder named from all its jobs,
never into A's own (``cloudtrain report A``), and ``cloudtrain-reports/`` is ignored by git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cloudtrain.app.report import REPORTS_DIR, folder_name, write_report
from tests.conftest import REPO
from tests.report.test_report_collect import JOB, local_run  # noqa: F401 — the real local run's files

SAGEMAKER = "cloudtrain-resnet50-imagenet-multi-worker-2026-11-25-19-20-33-123"[:63]


@pytest.mark.parametrize(
    ("jobs", "folder"),
    [
        (["8123456789012345678"], "8123456789012345678"),
        (["a-1", "b-2", "c-3"], "a-1+b-2+c-3"),
        (["b-2", "a-1"], "b-2+a-1"),  # the order given: the page's order
        (["proj/x", "wéird name"], "proj_x+wéird_name"),  # a path's separator, a space: never a folder,
    ],
)
def test_a_reports_folder_is_named_from_all_its_jobs(jobs, folder):
    assert folder_name(jobs) == folder


def test_a_set_too_long_for_a_folder_name_keeps_its_first_id_the_count_and_a_hash():
    three = [SAGEMAKER, SAGEMAKER[:-1] + "a", SAGEMAKER[:-1] + "b"]
    name = folder_name(three)
    assert name.startswith(SAGEMAKER + "+2-more-") and len(name) < 120
    assert name != folder_name([three[0], three[2], three[1]])  # another set (order), another folder
    assert folder_name(three[:1]) == SAGEMAKER


@pytest.mark.slow
def test_a_report_of_several_jobs_leaves_each_jobs_own_report_as_it_was(local_run):  # noqa: F811
    alone = write_report([JOB])
    assert alone.page == Path(REPORTS_DIR, JOB, "report.html")
    before = alone.page.read_bytes()
    both = write_report([JOB, JOB])
    assert both.page == Path(REPORTS_DIR, f"{JOB}+{JOB}", "report.html")
    assert alone.page.read_bytes() == before and both.page.is_file()


def test_the_report_and_run_folders_are_ignored_by_git(tmp_path):
    for folder in (REPORTS_DIR, "cloudtrain-runs"):
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", f"{folder}/x/report.html"], cwd=REPO, capture_output=True
        )
        assert ignored.returncode == 0, f"{folder}/ is not in .gitignore"
