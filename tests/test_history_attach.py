"""What ``status``/``logs`` give a backend's ``attach`` from history: the full name recorded for a backend the
registry says attaches by it (a local run's folder), else the short id. History names no backend."""

from __future__ import annotations

import json

import pytest

from cloudtrain import backend_rules, history
from cloudtrain.backends import LOCAL, clouds, register
from cloudtrain.history import JobRecord


def test_a_backend_registered_to_attach_by_name_gets_the_recorded_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend_rules, "_REGISTRY", dict(backend_rules._REGISTRY))
    monkeypatch.setattr(backend_rules, "_BY_NAME", set(backend_rules._BY_NAME))
    register("onhost", "tests.backends.example", attach_by_name=True)
    register("offhost", "tests.backends.example")
    for backend in ("onhost", "offhost"):
        history.record(JobRecord(job_id=f"{backend}-7", name=f"/srv/runs/{backend}-7", backend=backend, region="r1"))
    assert history.find("onhost-7").attach_id == "/srv/runs/onhost-7"  # type: ignore[union-attr]
    assert history.find("offhost-7").attach_id == "offhost-7"  # type: ignore[union-attr]


def test_an_old_history_line_still_reads_and_attaches_as_before() -> None:
    """Lines an older cloudtrain wrote (no field about attaching): a local run attaches by its folder, a cloud
    job by its short id."""
    cloud = clouds()[0]
    lines = [
        {
            "job_id": "demo-20261101-abc123",
            "name": "/home/me/proj/cloudtrain-runs/demo-20261101-abc123",
            "backend": LOCAL,
            "region": "local",
            "project": None,
            "config": "job.yaml",
            "kind": "job",
        },
        {
            "job_id": "4417",
            "name": "full/name/of/4417",
            "backend": cloud,
            "region": "eu-west-2",
            "project": None,
            "config": None,
            "kind": "job",
        },
    ]
    path = history.history_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    local, job = history.find("demo-20261101-abc123"), history.find("4417")
    assert local is not None and local.attach_id == "/home/me/proj/cloudtrain-runs/demo-20261101-abc123"
    assert job is not None and job.attach_id == "4417"
