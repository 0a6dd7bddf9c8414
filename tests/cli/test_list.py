"""``cloudtrain list``: one line per job on a terminal of 80 or 120 columns, with how long each job took,
its main final metric and a short place (never a run folder's absolute path); the right jobs, states and
numbers from a history of 10,000 records; what history keeps at a job's end."""

from __future__ import annotations

import datetime as dt
import json
import random
import re

import pytest

from cloudtrain import history
from cloudtrain.app.outcome import summarise
from cloudtrain.backends.base import JobState, JobStatus
from cloudtrain.cli import main
from tests.cli.conftest import on_terminal

VERTEX_ID = "8123456789012345678"
SAGEMAKER_NAME = "cloudtrain-resnet50-imagenet-multi-worker-2026-11-25-19-20-33-123"[:63]  # the longest it takes
LOCAL_RUN = "gpu4-20261125-192033-7f3a9c"
GONE_RUN = "cpu-20261125-180000-aaaaaa"


def _visible(text: str) -> str:
    return re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]", "", text).replace("\r", "")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project with one finished local run (its status.json: 5 min 05 s, val_accuracy 0.8125), in a history
    with a Vertex job that ended (7 min 30 s, its metrics kept at its end), a running SageMaker job, and a local
    run whose folder is gone."""
    home = tmp_path / "home"
    proj = home / "projects" / "my-model"
    run = proj / "cloudtrain-runs" / LOCAL_RUN / "local-run"
    run.mkdir(parents=True)
    status = {
        "job_id": LOCAL_RUN,
        "name": str(proj / "cloudtrain-runs" / LOCAL_RUN),
        "native_state": "succeeded",
        "created": "2026-11-25T19:22:00+00:00",
        "ended": "2026-11-25T19:27:05+00:00",
        "details": {"metrics": {"epoch": 3, "loss": 0.25, "val_accuracy": 0.8125}},
    }
    (run / "status.json").write_text(json.dumps(status))
    records = [
        {
            "job_id": VERTEX_ID,
            "name": f"projects/123456789012/locations/europe-west4/customJobs/{VERTEX_ID}",
            "backend": "vertex",
            "region": "europe-west4",
            "project": "my-project",
            "created": "2026-11-25T19:20:33+00:00",
        },
        {
            "job_id": SAGEMAKER_NAME,
            "backend": "sagemaker",
            "region": "eu-west-1",
            "state": "RUNNING",
            "name": f"arn:aws:sagemaker:eu-west-1:123456789012:training-job/{SAGEMAKER_NAME}",
            "created": "2026-11-25T19:21:00+00:00",
        },
        {
            "job_id": GONE_RUN,
            "name": str(tmp_path / "old" / "cloudtrain-runs" / GONE_RUN),
            "backend": "local",
            "region": "local",
            "state": "FAILED",
            "created": "2026-11-25T18:00:00+00:00",
        },
        {
            "job_id": LOCAL_RUN,
            "name": str(proj / "cloudtrain-runs" / LOCAL_RUN),
            "backend": "local",
            "region": "local",
            "state": "RUNNING",  # what history saw last; the run's own record says SUCCEEDED
            "created": "2026-11-25T19:22:00+00:00",
        },
        {  # the Vertex job's end, as a followed submit records it
            "job_id": VERTEX_ID,
            "name": f"projects/123456789012/locations/europe-west4/customJobs/{VERTEX_ID}",
            "backend": "vertex",
            "region": "europe-west4",
            "state": "SUCCEEDED",
            "ended": "2026-11-25T19:28:03+00:00",
            "metrics": {"loss": 0.0412, "accuracy": 0.9875},
        },
    ]
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "jobs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(cache))
    monkeypatch.setenv("HOME", str(home))
    return proj


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("where", ["project", "home"])
def test_each_job_is_one_line_with_its_id_whole(project, columns, where):
    shown = _visible(on_terminal("list", cwd=project if where == "project" else project.parents[2], columns=columns))
    lines = shown.splitlines()
    assert len(lines) == 1 + 4, shown  # a header, then one line per job
    assert lines[0].split()[:2] == ["job", "state"]
    jobs = [LOCAL_RUN, GONE_RUN, SAGEMAKER_NAME, VERTEX_ID]  # newest submit first
    for line, job in zip(lines[1:], jobs, strict=True):
        assert line.startswith(job + " "), f"{job} is not whole at the start of its line:\n{shown}"
        assert len(line) <= columns
    assert str(project.parents[2]) not in shown  # no absolute path of a run folder
    local, gone, sagemaker, vertex = lines[1:]
    assert re.search(r"\bFAILED\b", gone) and re.search(r"\bRUNNING\b", sagemaker)
    assert "SUCCEEDED" in local and "SUCCEEDED" in vertex
    if columns == 120:  # room for the time taken and the metric beside the longest id (63 characters)
        assert "5m05s" in local and "val_accuracy=0.8125" in local
        assert "7m30s" in vertex and "accuracy=0.9875" in vertex
        assert local.endswith("  ./" if where == "project" else "/my-model")  # the run's project
        assert vertex.endswith(" my-project")  # a place is cut at its start: its end says most


def test_at_80_columns_ids_of_usual_length_leave_room_for_everything(project, tmp_path):
    """Without SageMaker's longest name, an 80-column line has the time taken and the metric whole, and the
    place's end (what was cut from its start shows as ``…``)."""
    path = tmp_path / "cache" / "jobs.jsonl"
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines() if SAGEMAKER_NAME not in line))
    lines = _visible(on_terminal("list", cwd=project.parents[2], columns=80)).splitlines()
    assert len(lines) == 4 and all(len(line) <= 80 for line in lines)
    assert lines[0].split() == ["job", "state", "took", "metric", "where"]
    assert lines[1].split()[:4] == [LOCAL_RUN, "SUCCEEDED", "5m05s", "val_accuracy=0.8125"]
    assert lines[1].endswith("/my-model") and "…" in lines[1]
    assert lines[3].split()[:4] == [VERTEX_ID, "SUCCEEDED", "7m30s", "accuracy=0.9875"]


def test_list_json_has_the_duration_metric_and_place(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    assert main(["list", "-o", "json"]) == 0
    jobs = {j["job_id"]: j for j in json.loads(capsys.readouterr().out)}
    assert jobs[LOCAL_RUN]["state"] == "SUCCEEDED" and jobs[LOCAL_RUN]["seconds"] == 305.0
    assert jobs[LOCAL_RUN]["metric"] == {"name": "val_accuracy", "value": 0.8125}
    assert jobs[LOCAL_RUN]["place"] == "./"
    assert jobs[VERTEX_ID]["seconds"] == 450.0 and jobs[VERTEX_ID]["metrics"] == {"loss": 0.0412, "accuracy": 0.9875}
    assert jobs[SAGEMAKER_NAME]["seconds"] is None and jobs[SAGEMAKER_NAME]["metric"] is None
    assert jobs[GONE_RUN]["place"] == "../../../old" and jobs[GONE_RUN]["state"] == "FAILED"  # history's folder


def _reference(rows: list[dict], limit: int) -> list[dict]:
    """What list must show, computed the plain way: each job's lines merged in order, newest submit first."""
    merged: dict[tuple[str, str], dict] = {}
    for row in rows:
        key = (row["backend"], row["name"])
        merged.setdefault(key, {}).update({k: v for k, v in row.items() if v is not None})
    return list(reversed(list(merged.values())))[:limit]


def test_a_history_of_10000_records_lists_the_newest_jobs_with_their_latest_state(tmp_path, monkeypatch, capsys):
    """Correctness at the size bench/cli_bench.py times (``list`` at 10,000 records): the newest jobs in
    submit order, each with the state, end and numbers of its latest lines, however far apart they are."""
    rng = random.Random(40)
    rows: list[dict] = []
    open_jobs: list[dict] = []
    start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    for n in range(10_000):
        if open_jobs and rng.random() < 0.3:  # a job's end, some lines after its submit
            job = open_jobs.pop(rng.randrange(len(open_jobs)))
            ended = dt.datetime.fromisoformat(job["created"]) + dt.timedelta(seconds=rng.randrange(1, 90_000))
            rows.append(
                {
                    **job,
                    "state": rng.choice(["SUCCEEDED", "FAILED", "CANCELLED"]),
                    "ended": ended.isoformat(),
                    "metrics": {"val_accuracy": round(rng.random(), 4)},
                }
            )
            continue
        backend = rng.choice(["vertex", "sagemaker", "slurm"])
        job = {
            "job_id": f"job-{n:05d}",
            "name": f"{backend}/job-{n:05d}",
            "backend": backend,
            "region": rng.choice(["us-central1", "eu-west-1", "asia-east1"]),
            "created": (start + dt.timedelta(minutes=n)).isoformat(),
        }
        rows.append(job)
        open_jobs.append(job)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "jobs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(cache))
    assert len((cache / "jobs.jsonl").read_text().splitlines()) == 10_000

    for limit, region in ((20, None), (50, "eu-west-1")):
        argv = ["list", "--limit", str(limit), "-o", "json"] + (["--region", region] if region else [])
        assert main(argv) == 0
        listed = json.loads(capsys.readouterr().out)
        expected = _reference([r for r in rows if not region or r["region"] == region], limit)
        assert [j["job_id"] for j in listed] == [e["job_id"] for e in expected]
        for job, want in zip(listed, expected, strict=True):
            got = (job["state"], job["ended"], job["metrics"])
            assert got == (want.get("state"), want.get("ended"), want.get("metrics"))
            if want.get("ended"):
                took = dt.datetime.fromisoformat(want["ended"]) - dt.datetime.fromisoformat(want["created"])
                assert job["seconds"] == took.total_seconds()
                assert job["metric"] == {"name": "val_accuracy", "value": want["metrics"]["val_accuracy"]}
    assert main(["list", "--limit", "20"]) == 0  # a pipe: a header and one tab-separated line per job
    plain = capsys.readouterr().out.splitlines()
    assert len(plain) == 21 and all(line.count("\t") == 10 for line in plain)  # 11 fields, args last


def test_a_followed_jobs_end_and_final_numbers_are_kept_in_history():
    created = dt.datetime(2026, 3, 1, 8, 0, tzinfo=dt.timezone.utc)
    name = "projects/p/locations/us-east1/customJobs/77"
    history.record(history.JobRecord("77", name, "vertex", "us-east1", created=created.isoformat()))
    status = JobStatus(
        "77",
        name,
        JobState.FAILED,
        "JOB_STATE_FAILED",
        created=created,
        ended=created + dt.timedelta(minutes=42),
        details={"metrics": {"val_loss": 0.5, "epoch": 4, "ok": True}},
    )
    summarise(status)
    kept = history.find("77")
    assert kept is not None and kept.state == "FAILED"
    assert kept.ended == "2026-03-01T08:42:00+00:00"
    assert kept.metrics == {"val_loss": 0.5, "epoch": 4.0}  # numbers only


def test_a_history_line_with_metrics_that_are_not_numbers_is_one_warning(tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache"
    cache.mkdir()
    good = {"job_id": "a", "name": "n/a", "backend": "vertex", "region": "r", "metrics": {"loss": 1.5}}
    bad = {**good, "job_id": "b", "name": "n/b", "metrics": {"loss": "low"}}
    (cache / "jobs.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(cache))
    assert main(["list", "-o", "json"]) == 0
    captured = capsys.readouterr()
    assert [j["job_id"] for j in json.loads(captured.out)] == ["a"]
    assert "metrics is not an object of numbers" in captured.err


def test_the_args_column_shows_what_differs_and_fits_120_columns(project, tmp_path):
    """Three runs of one experiment, alike but for the learning rate: ``list`` shows each one's ``--lr``, not
    the args they share, in lines of at most 120 columns; ``-o json`` has every arg."""
    path = tmp_path / "cache" / "jobs.jsonl"
    lines = []
    for n, lr in enumerate(("0.1", "0.01", "0.001")):
        lines.append(
            {
                "job_id": f"lr-20261201-10000{n}-abcdef",
                "name": f"projects/p/locations/europe-west4/customJobs/{n}",
                "backend": "vertex",
                "region": "europe-west4",
                "state": "SUCCEEDED",
                "created": f"2026-12-01T10:00:0{n}+00:00",
                "ended": f"2026-12-01T10:05:0{n}+00:00",
                "metrics": {"val_accuracy": 0.9 + n / 100},
                "args": ["--epochs=40", "--batch_size=64", f"--lr={lr}"],
                "experiment": "lr-study",
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    shown = _visible(on_terminal("list", cwd=project, columns=120)).splitlines()
    assert shown[0].split()[-1] == "args" and all(len(line) <= 120 for line in shown)
    assert [line.split()[-1] for line in shown[1:]] == ["--lr=0.001", "--lr=0.01", "--lr=0.1"]
    assert "--epochs=40" not in "\n".join(shown)
    narrow = _visible(on_terminal("list", cwd=project, columns=80)).splitlines()
    assert all(len(line) <= 80 for line in narrow)
