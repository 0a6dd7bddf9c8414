"""Tables on a terminal: an id (what people copy into the next command) is never wrapped or cut."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import on_terminal

VERTEX_ID = "8123456789012345678"  # Vertex AI's numeric custom-job id
SAGEMAKER_NAME = "cloudtrain-resnet50-imagenet-multi-worker-2026-11-25-19-20-33-123"[:63]  # the longest it takes
LOCAL_RUN = "gpu4-20261125-192033-7f3a9c"  # a local run's folder


@pytest.fixture
def history(tmp_path, monkeypatch):
    records = [
        {
            "job_id": VERTEX_ID,
            "name": f"projects/123456789012/locations/us-central1/customJobs/{VERTEX_ID}",
            "backend": "vertex",
            "region": "us-central1",
            "state": "SUCCEEDED",
            "created": "2026-11-25T19:20:33",
        },
        {
            "job_id": SAGEMAKER_NAME,
            "backend": "sagemaker",
            "region": "eu-west-1",
            "state": "RUNNING",
            "name": f"arn:aws:sagemaker:eu-west-1:123456789012:training-job/{SAGEMAKER_NAME}",
            "created": "2026-11-25T19:21:00",
        },
        {
            "job_id": LOCAL_RUN,
            "name": f"/home/someone/projects/my-model/cloudtrain-runs/{LOCAL_RUN}",
            "backend": "local",
            "region": "local",
            "state": "FAILED",
            "created": "2026-11-25T19:22:00",
        },
    ]
    (tmp_path / "jobs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path))


@pytest.mark.parametrize("columns", [80, 120])
def test_list_never_wraps_or_cuts_a_job_id(history, columns):
    shown = on_terminal("list", columns=columns)
    lines = shown.splitlines()
    for job_id in (VERTEX_ID, SAGEMAKER_NAME, LOCAL_RUN):
        assert any(job_id in line for line in lines), (
            f"{job_id} is not whole on one line at {columns} columns:\n{shown}"
        )
    assert len(_visible(shown).splitlines()) == 1 + 3  # one line per job: the other columns are cut (…), not wrapped
    assert all(len(line) <= columns for line in _visible(shown).splitlines())  # and the table fits the terminal


def _visible(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]", "", text).replace("\r", "")
