"""When training starts in a run's timeline, for code that prints no ``plan`` event: a user's own
package, a script, a trainer of another tool (issue #25, bug 6: a 60-epoch run read
"installing package 25 s, 100 %")."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys

import pytest

from cloudtrain.backends.base import JobState, JobStatus, LogLine
from cloudtrain.backends.sagemaker.cloudtrain_launch import install_command, module_command
from cloudtrain.backends.sagemaker.phases import sagemaker_marks
from cloudtrain.following import timeline
from tests.conftest import REPO

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)
CHATTY = REPO / "tests" / "packages" / "chatty_trainer"


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def phases(lines: list[LogLine], end: float) -> list[tuple[str, float]]:
    job = JobStatus(
        "1",
        "projects/p/locations/r/customJobs/1",
        JobState.SUCCEEDED,
        "JOB_STATE_SUCCEEDED",
        created=at(0),
        ended=at(end),
        first_phase="provisioning",
        started=at(60),  # Vertex AI's start_time
    )
    return [(p.name, p.seconds) for p in timeline.of_run(job, timeline.log_marks(lines))]


PIP = [
    "Processing /tmp/trainer.tar.gz",
    "  Preparing metadata (setup.py): started",
    "Requirement already satisfied: numpy in /usr/local/lib/python3.10/site-packages (from trainer==0.1) (1.26.4)",
    "Building wheels for collected packages: trainer",
    "Successfully built trainer",
    "Installing collected packages: trainer",
    "Successfully installed trainer-0.1",
    "WARNING: Running pip as the 'root' user can result in broken permissions",
    "",
]


def test_a_user_package_trains_from_its_first_line_after_the_install() -> None:
    lines = [LogLine(at(70 + i), "workerpool0-0", text) for i, text in enumerate(PIP)]
    lines += [LogLine(at(100), "workerpool0-0", "Epoch 1/60"), LogLine(at(160), "workerpool0-0", "Epoch 2/60")]
    assert phases(lines, 1000) == [
        ("provisioning", 60),
        ("pulling image", 10),
        ("installing package", 30),
        ("training", 900),
    ]


def test_the_first_event_of_any_kind_starts_training_when_there_is_no_plan() -> None:
    lines = [
        LogLine(at(70), "workerpool0-0", "Processing /tmp/trainer.tar.gz"),
        LogLine(at(90), "workerpool0-0", json.dumps({"event": "epoch", "epoch": 1})),
        LogLine(at(95), "workerpool0-0", "Epoch 2/2"),
    ]
    assert phases(lines, 100)[-2:] == [("installing package", 20), ("training", 10)]


def test_the_bundled_trainer_still_trains_from_its_plan_event() -> None:
    """Its TensorFlow start-up lines come before the plan: the import is still set-up."""
    lines = [
        LogLine(at(70), "workerpool0-0", "Processing /tmp/trainer.tar.gz"),
        LogLine(at(80), "workerpool0-0", "I0000 00:00:1732350000.463277 cudart_stub.cc:31] no cuda"),
        LogLine(at(90), "workerpool0-0", json.dumps({"event": "plan", "epochs": 3})),
    ]
    assert phases(lines, 100)[-2:] == [("installing package", 20), ("training", 10)]


def test_sagemaker_trains_from_the_launchers_exec_line(tmp_path) -> None:
    """The toolkit's and the launcher's lines, then pip's, are set-up; the launcher's exec line is the
    user module's start (the lines as the real launcher prints them)."""
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "my_pkg-0.1.tar.gz").write_bytes(b"")
    hyper = {"cloudtrain_module": "my_pkg.train", "cloudtrain_args": ["--epochs", "3"]}
    say = "cloudtrain: "
    lines = [
        LogLine(at(200), "algo-1", "2026-01-01 12:03:20,000 sagemaker-training-toolkit INFO     Invoking user script"),
        LogLine(at(201), "algo-1", 'SM_HOSTS=["algo-1"]'),
        LogLine(at(202), "algo-1", say + " ".join(install_command(str(tmp_path), python="/usr/local/bin/python3"))),
        *[LogLine(at(203 + i), "algo-1", text) for i, text in enumerate(PIP)],
        LogLine(at(240), "algo-1", say + " ".join(module_command(hyper, python="/usr/local/bin/python3"))),
        LogLine(at(250), "algo-1", "Epoch 1/3"),
    ]
    desc = {
        "CreationTime": at(0),
        "SecondaryStatusTransitions": [
            {"Status": "Starting", "StartTime": at(5)},
            {"Status": "Training", "StartTime": at(200)},
        ],
    }
    marks = timeline.merge(sagemaker_marks(desc), timeline.log_marks(lines))
    got = [(p.name, p.seconds) for p in timeline.build(marks, at(300))]
    assert got == [("queued", 5), ("provisioning", 195), ("installing package", 40), ("training", 60)]


def test_a_run_that_prints_nothing_stays_installing() -> None:
    lines = [LogLine(at(70), "workerpool0-0", "Processing /tmp/trainer.tar.gz")]
    assert phases(lines, 100)[-1] == ("installing package", 30)


@pytest.mark.slow
def test_a_local_run_of_a_users_package_puts_its_epochs_under_training(tmp_path) -> None:
    """The chatty package (no events): history's timeline trains from its first line of output."""
    config = tmp_path / "chatty.yaml"
    config.write_text(
        f"name: chatty\nbackend: local\ntarget: vertex\nregion: us-central1\n"
        f"machine: {{type: n1-standard-4}}\n"
        f"package: {{path: {CHATTY}, module: chatty_trainer.task}}\nargs: ['--epochs', '3']\n"
    )
    env = {**os.environ}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cloudtrain", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    submitted = run("submit", str(config), "-o", "json")
    assert submitted.returncode == 0, submitted.stderr
    job = json.loads(submitted.stdout)["job_id"]
    lines = [json.loads(line) for line in run("logs", job, "-o", "json").stdout.splitlines()]
    from cloudtrain.following.setup_lines import is_setup

    # its first own line: not cloudtrain's notices, not TensorFlow's start-up noise (set-up, issue 40)
    first_own = next(line["timestamp"] for line in lines if not is_setup(line["replica"], line["message"]))
    from cloudtrain import history

    saved = history.load_run(job)
    assert saved is not None, "the followed run keeps its end in history"
    rows = {row["phase"]: row for row in saved["timeline"]}
    assert list(rows) == ["starting TensorFlow", "training"]  # its environment was there: nothing installed
    assert dt.datetime.fromisoformat(rows["training"]["start"]) == dt.datetime.fromisoformat(first_own)
    assert rows["training"]["end"] == saved["timeline"][-1]["end"]


def test_a_running_job_ends_at_its_last_mark_and_phases_keep_their_times_to_the_millisecond() -> None:
    phases_ = timeline.build({"queued": at(0), "provisioning": at(30.12345)}, None)
    assert [(p.name, p.seconds) for p in phases_] == [("queued", 30.12345), ("provisioning", 0)]
    rows = timeline.cost_shares(phases_, cost_per_hour=3.6)
    assert rows[0] == {
        "phase": "queued",
        "start": at(0).isoformat(),
        "end": at(30.12345).isoformat(),
        "seconds": 30.123,
        "share": 1.0,
        "cost_usd": None,
    }
    assert rows[1]["cost_usd"] == 0.0  # billed from provisioning on


def test_a_training_mark_given_by_the_caller_wins() -> None:
    marks = {"installing package": at(0), "training": at(50), "first output": at(10)}
    assert [(p.name, p.seconds) for p in timeline.build(marks, at(60))] == [
        ("installing package", 50),
        ("training", 10),
    ]


def test_durations_change_unit_exactly_at_a_minute_and_an_hour() -> None:
    """The mutmut after-run's survivors (docs/mutation-testing.md): the boundaries themselves."""
    from cloudtrain.text.numbers import human_seconds

    assert [human_seconds(s) for s in (59.4, 60, 3599, 3600, 3660)] == [
        "59 s",
        "1 min",
        "59 min 59 s",
        "1 h 0 min",
        "1 h 1 min",
    ]


def test_the_summary_line_joins_the_phases_with_a_middle_dot_and_a_workers_end_starts_the_upload() -> None:
    import datetime as _dt
    import json as _json

    from cloudtrain.backends.base import LogLine
    from cloudtrain.following.timeline import build, describe, log_marks

    t0 = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc)
    lines = [
        LogLine(t0, "chief", "Processing /root/trainer.tar.gz"),
        LogLine(t0 + _dt.timedelta(seconds=10), "chief", _json.dumps({"event": "epoch", "epoch": 1})),
        LogLine(t0 + _dt.timedelta(seconds=75), "worker-0", _json.dumps({"event": "worker_done"})),
    ]
    phases = build(log_marks(lines), t0 + _dt.timedelta(seconds=80))
    assert describe(phases) == "installing package 10 s · training 1 min 5 s · uploading 5 s"
