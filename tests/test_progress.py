"""The live status line's numbers (cloudtrain/following/progress.py, status_line.py): examples/s summed
over the replicas, ETA, steps, cost billed from provisioning on — values, not the line's shape."""

from __future__ import annotations

import datetime as dt
import io
import json

import pytest

from cloudtrain.backends.base import LogLine
from cloudtrain.following.progress import Progress
from cloudtrain.following.status_line import LiveStatus

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)


def epoch_line(
    replica: str,
    n: int,
    rate: float,
    *,
    tagged: str | None = None,
    seconds: float = 10.0,
    steps: int = 50,
    epochs: int = 10,
) -> LogLine:
    fields = {
        "event": "epoch",
        "epoch": n,
        "epochs": epochs,
        "loss": 0.5,
        "examples_per_sec": rate,
        "epoch_time_s": seconds,
        "steps": steps,
    }
    if tagged:
        fields["replica"] = tagged
    return LogLine(T0 + dt.timedelta(seconds=n), replica, json.dumps(fields))


def test_examples_per_second_is_each_replicas_latest_summed() -> None:
    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 0.0)
    progress(epoch_line("chief", 1, 1000.0))
    progress(epoch_line("worker-0", 1, 900.0))
    progress(epoch_line("chief", 2, 1200.0))  # replaces the chief's 1000, not added to it
    snap = progress.snapshot()
    assert snap.examples_per_sec == 2100.0
    assert "2,100 ex/s" in snap.line()


def test_a_replica_named_in_the_event_counts_on_its_own() -> None:
    """Events relayed through one log stream name their replica: each is its own rate."""
    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 0.0)
    progress(epoch_line("workerpool0-0", 1, 300.0, tagged="worker-0"))
    progress(epoch_line("workerpool0-0", 1, 500.0, tagged="worker-1"))
    assert progress.snapshot().examples_per_sec == 800.0


def test_eta_is_the_remaining_epochs_at_the_mean_of_the_last_three() -> None:
    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 0.0)
    for n, seconds in enumerate([10.0, 20.0, 30.0, 40.0], start=1):
        progress(epoch_line("chief", n, 100.0, seconds=seconds))
    snap = progress.snapshot()
    assert (snap.epoch, snap.epochs, snap.steps) == (4, 10, 200)
    assert snap.eta_s == 6 * 30.0  # (20 + 30 + 40) / 3 per epoch, 6 to go
    progress(LogLine(T0, "chief", json.dumps({"event": "done"})))
    assert progress.snapshot().phase == "uploading" and progress.snapshot().eta_s is None


def test_cost_bills_from_provisioning_not_from_the_queue() -> None:
    now = [0.0]
    progress = Progress(cost_per_hour=3.0, started=0.0, clock=lambda: now[0])
    progress.set_phase("queued")
    now[0] = 600.0
    assert progress.snapshot().cost_usd == 0.0
    progress.set_phase("provisioning")
    now[0] = 600.0 + 1800
    snap = progress.snapshot()
    assert snap.cost_usd == 1.5 and snap.elapsed_s == 2400.0
    assert snap.line().endswith("elapsed 40 min · $1.50")


def test_the_main_metric_is_the_first_present_of_val_accuracy_accuracy_val_loss() -> None:
    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 0.0)
    progress(LogLine(T0, "chief", json.dumps({"event": "epoch", "epoch": 1, "accuracy": 0.6, "val_loss": 0.9})))
    assert progress.snapshot().metric == ("accuracy", 0.6)
    progress(LogLine(T0, "chief", json.dumps({"event": "epoch", "epoch": 2, "val_accuracy": 0.8})))
    assert progress.snapshot().metric == ("val_accuracy", 0.8)


def test_the_live_line_on_a_terminal_shows_the_sum(monkeypatch) -> None:
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160)
    printed: list[str] = []
    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 0.0)
    with LiveStatus(console, progress, lambda line: printed.append(line.message)) as live:
        for line in (epoch_line("chief", 1, 1500.0), epoch_line("worker-0", 1, 1400.0)):
            live(line)
        live._live.refresh()
        shown = out.getvalue()
    assert "training · epoch 1/10" in shown and "2,900 ex/s" in shown
    assert len(printed) == 2  # every line is printed as well as counted


@pytest.mark.parametrize("before", ["queued", "provisioning", "pulling image"])
def test_the_first_line_means_the_machines_run_and_the_package_installs(before) -> None:
    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 0.0)
    progress.set_phase(before)
    progress(LogLine(T0, "chief", "Processing /tmp/trainer.tar.gz"))
    assert progress.snapshot().phase == "installing package"


def test_the_plan_gives_the_epoch_count_before_the_first_epoch() -> None:
    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 0.0)
    progress(LogLine(T0, "chief", json.dumps({"event": "plan", "args": {"epochs": 7}})))
    snap = progress.snapshot()
    assert (snap.phase, snap.epochs, snap.epoch) == ("training", 7, None)
    other = Progress(cost_per_hour=None, started=0.0, clock=lambda: 0.0)
    other(LogLine(T0, "chief", json.dumps({"event": "plan", "epochs": 5})))
    assert other.snapshot().epochs == 5


@pytest.mark.parametrize("kind", ["done", "worker_done"])
def test_the_end_of_training_is_uploading(kind) -> None:
    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 0.0)
    progress(epoch_line("chief", 1, 100.0))
    progress(LogLine(T0, "worker-0", json.dumps({"event": kind})))
    assert progress.snapshot().phase == "uploading"


def test_an_interruption_is_counted_in_the_line() -> None:
    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 0.0)
    progress(LogLine(T0, "chief", json.dumps({"event": "preempted", "step": 3, "notice": "SIGTERM"})))
    snap = progress.snapshot()
    assert snap.interruptions == 1 and "· 1 interruption ·" in snap.line()


def test_line_counts_steps_and_plural_interruptions_and_elapsed_is_since_the_job_was_created() -> None:
    from cloudtrain.following.progress import Snapshot

    snap = Snapshot(phase="training", elapsed_s=65.0, cost_usd=None, epoch=3, steps=1234, interruptions=2)
    assert snap.line() == "training · epoch 3 · step 1,234 · 2 interruptions · elapsed 1 min 5 s"
    progress = Progress(cost_per_hour=None, started=1000.0, clock=lambda: 1600.0)
    assert progress.snapshot().elapsed_s == 600.0


def test_sagemakers_pending_secondary_status_is_queued() -> None:
    from cloudtrain.backends.sagemaker.jobs import to_status
    from cloudtrain.following.progress import phase_of

    desc = {"TrainingJobName": "j", "TrainingJobStatus": "InProgress", "SecondaryStatus": "Pending"}
    status = to_status(desc, "us-east-1")
    assert phase_of(status) == "queued"


@pytest.mark.parametrize(
    "first_own",
    [
        "Epoch 1/3",  # the user code's first line of its own
        "cloudtrain: python -m my_trainer.task --epochs 3",  # cloudtrain's SageMaker launcher starting the module
        json.dumps({"event": "custom"}),  # an event of any kind
    ],
)
def test_a_user_packages_own_output_is_training_in_the_live_line_as_in_the_timeline(first_own) -> None:
    """A user's package prints no plan event: the live line leaves "installing package" at the same line
    where the end-of-run timeline starts training (#25 (e))."""
    from cloudtrain.following import timeline

    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 0.0)
    progress.set_phase("provisioning")
    lines = [
        LogLine(T0, "chief", "Processing /root/my_trainer-0.1.tar.gz"),
        LogLine(T0 + dt.timedelta(seconds=1), "chief", "Successfully installed my-trainer-0.1"),
        LogLine(T0 + dt.timedelta(seconds=2), "cloudtrain", "output: /tmp/run"),  # a local run's own notice
        LogLine(T0 + dt.timedelta(seconds=3), "chief", first_own),
        LogLine(T0 + dt.timedelta(seconds=9), "chief", "done"),
    ]
    for line in lines[:3]:
        progress(line)
        assert progress.snapshot().phase == "installing package", line.message
    progress(lines[3])
    assert progress.snapshot().phase == "training"
    phases = timeline.build(timeline.log_marks(lines), lines[-1].timestamp)
    assert [(p.name, p.start) for p in phases] == [("installing package", T0), ("training", lines[3].timestamp)]


def test_a_plain_line_after_the_end_of_training_stays_uploading() -> None:
    progress = Progress(cost_per_hour=None, started=0.0, clock=lambda: 0.0)
    progress(LogLine(T0, "chief", json.dumps({"event": "done"})))
    progress(LogLine(T0, "chief", "exporting the model"))
    assert progress.snapshot().phase == "uploading"
