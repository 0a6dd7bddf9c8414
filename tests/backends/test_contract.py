"""One contract, every backend: what a user relies on whichever backend runs the job.

Each leg gives a backend on its fake (the example backend's in-process engine; Vertex on the
fake JobService, Cloud Logging and the GCS emulator over 127.0.0.1, on a virtual clock) and
says how to script a job there. The tests then use only the interface and the CLI.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from cloudtrain.backends import get_backend, names, parse_job_id
from cloudtrain.backends.base import JobState
from cloudtrain.cli import main
from cloudtrain.errors import ExitCode
from cloudtrain.history import JobRecord, history_file, record
from tests.backends.vertex.conftest import backend, clock, gcs, jobs, logging_fake, make_package, make_spec  # noqa: F401

LINES = ["epoch 1 loss 0.5", "epoch 2 loss 0.25", "done"]


@dataclass
class Leg:
    backend: Any
    spec: Any
    package: Any
    succeed: Callable[[list[str]], None]  # the next job runs, prints these lines, succeeds
    keep_running: Callable[[], None]  # the next job runs until cancelled
    full_name: Callable[[Any], str]  # a handle's full job name, as users paste it


def _example_leg(monkeypatch, tmp_path) -> Leg:
    from tests.backends import example

    monkeypatch.setattr(example, "ENGINE", example.Engine())

    def succeed(lines):
        example.ENGINE.next_script = (["PENDING", "RUNNING", "RUNNING", "SUCCEEDED"], lines)

    def keep_running():
        example.ENGINE.next_script = (["PENDING", "RUNNING"], [])

    return Leg(
        example.BACKEND,
        make_spec(),
        make_package(tmp_path),
        succeed,
        keep_running,
        lambda handle: f"example:{handle.job_id}",
    )


def _vertex_leg(request, monkeypatch, tmp_path) -> Leg:
    from tests.fakes.vertex_jobs import Script

    vertex, fake_jobs, logs, clock_ = (request.getfixturevalue(n) for n in ("backend", "jobs", "logging_fake", "clock"))
    request.getfixturevalue("gcs")
    monkeypatch.setattr(importlib.import_module("cloudtrain.backends.vertex"), "BACKEND", vertex)

    def succeed(lines):
        fake_jobs.scripts.append(Script(states=["PENDING", "RUNNING", "RUNNING", "SUCCEEDED"]))
        job_id = str(1000 + len(fake_jobs.jobs))  # the fake numbers jobs from 1000
        for n, message in enumerate(lines):
            logs.add(job_id, "workerpool0-0", message, at=clock_.time() + 1 + n)

    def keep_running():
        fake_jobs.scripts.append(Script(states=["PENDING", "RUNNING"]))

    return Leg(vertex, make_spec(), make_package(tmp_path), succeed, keep_running, lambda handle: handle.name)


@pytest.fixture(params=["example", pytest.param("vertex", marks=pytest.mark.server)])
def leg(request, monkeypatch, tmp_path) -> Leg:
    if request.param == "example":
        return _example_leg(monkeypatch, tmp_path)
    return _vertex_leg(request, monkeypatch, tmp_path)


def test_every_leg_is_a_registered_backend(leg: Leg) -> None:
    assert leg.backend.name in names()
    assert get_backend(leg.backend.name) is leg.backend


def test_render_is_pure_json_and_the_same_twice(leg: Leg) -> None:
    first = leg.backend.render(leg.spec, leg.package)
    assert json.loads(json.dumps(first)) == first == leg.backend.render(leg.spec, leg.package)


def test_a_job_prints_each_line_once_and_ends_with_the_tables_exit_code(leg: Leg) -> None:
    leg.succeed(LINES)
    handle = leg.backend.submit(leg.spec, leg.package)
    assert [line.message for line in handle.logs(follow=True)] == LINES
    final = handle.wait()
    assert final.state is JobState.SUCCEEDED and final.state.exit_code == ExitCode.OK
    assert final.job_id == handle.job_id


def test_cancel_stops_the_job_and_exits_130(leg: Leg) -> None:
    leg.keep_running()
    handle = leg.backend.submit(leg.spec, leg.package)
    assert handle.status().state in (JobState.PENDING, JobState.RUNNING)
    handle.cancel()
    final = handle.wait()
    assert final.state is JobState.CANCELLED and final.state.exit_code == ExitCode.INTERRUPTED == 130


def test_the_full_name_finds_the_backend_and_its_location(leg: Leg) -> None:
    leg.keep_running()
    handle = leg.backend.submit(leg.spec, leg.package)
    backend, job_id, location = parse_job_id(leg.full_name(handle))
    assert (backend, job_id) == (leg.backend.name, handle.job_id)
    assert location == dict(handle.location) and set(location) == set(leg.backend.location_keys)
    assert leg.backend.attach(job_id, **location).status().job_id == handle.job_id


def _record(leg: Leg, handle) -> None:
    location = dict(handle.location)
    record(
        JobRecord(
            handle.job_id, leg.full_name(handle), leg.backend.name, location.get("region", ""), location.get("project")
        )
    )


def test_reattach_by_full_name_with_no_flags_prints_each_line_once(leg: Leg, capsys) -> None:
    leg.succeed(LINES)
    handle = leg.backend.submit(leg.spec, leg.package)
    assert main(["logs", leg.full_name(handle), "--follow"]) == ExitCode.OK
    out = capsys.readouterr().out
    assert [n for line in LINES if (n := out.count(line)) != 1] == []


def test_history_list_and_status_find_the_job_by_its_short_id(leg: Leg, capsys) -> None:
    leg.keep_running()
    handle = leg.backend.submit(leg.spec, leg.package)
    _record(leg, handle)
    assert main(["list", "-o", "json"]) == ExitCode.OK
    listed = json.loads(capsys.readouterr().out)
    assert [(j["job_id"], j["backend"]) for j in listed] == [(handle.job_id, leg.backend.name)]
    assert main(["status", handle.job_id, "-o", "json"]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["job_id"] == handle.job_id


def test_a_damaged_history_line_is_one_warning_and_the_job_is_still_found(leg: Leg, capsys) -> None:
    leg.keep_running()
    handle = leg.backend.submit(leg.spec, leg.package)
    history_file().parent.mkdir(parents=True, exist_ok=True)
    history_file().write_text('{"job_id": "half a line\n')
    _record(leg, handle)
    assert main(["list", "-o", "json"]) == ExitCode.OK
    captured = capsys.readouterr()
    assert [j["job_id"] for j in json.loads(captured.out)] == [handle.job_id]
    assert captured.err.count("warning") == 1 and str(history_file()) in captured.err


def test_an_unknown_job_is_bad_input_exit_2(leg: Leg, capsys) -> None:
    assert main(["status", "no-such-job-anywhere"]) == ExitCode.BAD_INPUT
    assert "no-such-job-anywhere" in capsys.readouterr().err
