"""What the report collects for one run (cloudtrain/reporting/collect.py), value by value: a real local
run's files read back through history and the backend, a priced run's cost and its basis, and which
source wins where two know the same thing (the timeline and the interruptions ``finish`` saved live,
the replicas of the plan over the status's machines)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from cloudtrain import catalog
from cloudtrain.app.report import collect_run
from cloudtrain.backends.base import JobState, JobStatus, LogLine
from cloudtrain.errors import UsageError
from cloudtrain.history import cache_dir
from cloudtrain.reporting import collect

#: The files of a real `cloudtrain submit` of tests/packages/keras_events (2 replicas, --epochs 3, local):
#: its run folder and this machine's history of it.
RUN = Path(__file__).parent / "data" / "local-run"
JOB = "ke-20261125-234016-eaz394"
T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def event(seconds: float, kind: str, source: str = "chief", **fields) -> LogLine:
    return LogLine(at(seconds), source, json.dumps({"event": kind, **fields}))


def status(
    details: dict | None = None, state: JobState = JobState.SUCCEEDED, ended: float = 3600, **fields
) -> JobStatus:
    """A status as a backend gives it: its typed ``fields`` (each backend fills them) and display ``details``."""
    return JobStatus(
        "j-1", "j-1", state, state.value.lower(), created=T0, ended=at(ended), details=details or {}, **fields
    )


#: Where the run's project was when it ran, as its history and status.json record it: a folder no machine has.
#: The run is read where its project is now (the test's folder), as after a project was moved or renamed.
RECORDED = Path("/moved-away/w25/run")


@pytest.fixture
def local_run(tmp_path, monkeypatch) -> Path:
    """The real run's files in a project that moved: its folder under ./cloudtrain-runs of the test's folder,
    its history (naming the folder it ran in, which is gone) in the cache."""
    assert not RECORDED.exists()
    assert str(RECORDED / "cloudtrain-runs" / JOB) in (RUN / "cache" / "jobs.jsonl").read_text()
    shutil.copytree(RUN / "cloudtrain-runs", tmp_path / "cloudtrain-runs")
    shutil.copytree(RUN / "cache", cache_dir(), dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_real_local_run_is_collected_from_its_history_and_its_files(local_run) -> None:
    data = collect_run(JOB)
    assert (data.job_id, data.backend, data.state) == (JOB, "local", "SUCCEEDED")
    assert data.created == dt.datetime(2026, 11, 25, 23, 40, 45, 411105, tzinfo=dt.timezone.utc)
    assert data.ended == dt.datetime(2026, 11, 25, 23, 40, 45, 719762, tzinfo=dt.timezone.utc)
    assert data.replicas == 2 and data.machine is None  # chief and worker-0; a local run names no instance type
    assert [(e["epoch"], e["loss"]) for e in data.epochs] == [(1, 0.5), (2, 0.25), (3, 0.5 / 3)]  # the chief's only
    assert data.rates == {}  # the package reports no examples/s
    saved = json.loads((cache_dir() / "runs" / f"{JOB}.json").read_text())
    assert data.phases == saved["timeline"]  # what finish saw live, not re-derived from the log
    assert [(p["phase"], p["seconds"]) for p in data.phases] == [("installing package", 0.204), ("training", 0.104)]
    assert data.interruptions is None
    assert (data.cost_per_hour, data.cost_usd, data.cost_basis) == (None, None, "not priced (local run)")
    assert data.trials == [] and data.metric is None


def test_what_finish_saved_live_wins_over_the_runs_log(local_run) -> None:
    """A cloud's log can arrive late or not at all: the timeline and interruptions ``finish`` saw live (and
    kept in history) are the report's, not what the finished log would give again."""
    from cloudtrain import history

    saved = history.load_run(JOB)
    assert saved is not None
    saved["timeline"] = [
        {
            "phase": "training",
            "start": "2026-11-25T23:40:45+00:00",
            "end": "2026-11-25T23:40:46+00:00",
            "seconds": 1.0,
            "share": 1.0,
            "cost_usd": None,
        }
    ]
    saved["interruptions"] = {"count": 1, "items": []}
    history.save_run(JOB, saved)
    data = collect_run(JOB)
    assert data.phases == saved["timeline"] and data.interruptions == {"count": 1, "items": []}


def test_a_job_not_in_this_machines_history_is_a_usage_error(local_run) -> None:
    with pytest.raises(UsageError) as caught:
        collect_run("nope-1")
    assert str(caught.value) == "job 'nope-1' is not in this machine's history — see cloudtrain list"


def test_replicas_and_machine_from_the_status_and_the_plans_replicas_win() -> None:
    sagemaker = collect.from_parts(status(replica_count=3, machine_type="ml.g5.xlarge"), [], "sagemaker")
    assert (sagemaker.replicas, sagemaker.machine) == (3, "ml.g5.xlarge")
    listed = collect.from_parts(status({"replicas": ["chief", "worker-0", "worker-1"]}, replica_count=3), [], "local")
    assert listed.replicas == 3  # the replica list first
    plan = collect.from_parts(status(replica_count=2), [event(1, "plan", replicas=8)], "sagemaker")
    assert plan.replicas == 8  # tf.distribute's replicas in sync: 4 GPUs × 2 machines
    odd = collect.from_parts(status(replica_count=2), [event(1, "plan", replicas="8")], "sagemaker")
    assert odd.replicas == 2  # a plan without a number keeps the machines
    assert collect.from_parts(status(), [], "vertex").replicas is None


def test_each_replicas_throughput_over_its_own_training_time_and_the_chiefs_epochs() -> None:
    lines = [
        event(10, "epoch", epoch=1, epoch_time_s=12.5, examples_per_sec=800),
        event(11, "epoch", "workerpool0-0", replica="worker-0", epoch=1, epoch_time_s=10.0, examples_per_sec=700.5),
        event(20, "epoch", epoch=2, epoch_time_s=7.25, examples_per_sec=1500.0),
        event(21, "epoch", "workerpool0-0", replica="worker-0", epoch=2, epoch_time_s=5.0),
        event(22, "epoch", "workerpool0-0", replica="worker-0", epoch=3, examples_per_sec=900.0),
        event(30, "epoch", "worker-1", epoch=1, epoch_time_s=3.3333, examples_per_sec=10.0),
        event(31, "epoch", "chief", replica="worker-2", epoch=1, epoch_time_s=1.0, examples_per_sec=5.0),
        LogLine(at(31), "chief", "not an event"),
        event(32, "metric", name="val_auc", value=0.9),
    ]
    data = collect.from_parts(status(), lines, "vertex")
    assert data.rates == {
        "chief": [(12.5, 800.0), (19.75, 1500.0)],
        "worker-0": [(10.0, 700.5), (15.0, 900.0)],  # epoch 2 gave no rate; its time still counts
        "worker-1": [(3.333, 10.0)],
        "worker-2": [(1.0, 5.0)],
    }  # relayed through the chief's stream: its own, not the chief's
    assert [e["epoch"] for e in data.epochs] == [1, 2]  # the chief's untagged events are the table's epochs
    assert data.epochs[0]["examples_per_sec"] == 800


@pytest.mark.parametrize("chief", ["chief", "workerpool0-0", "algo-1"])
def test_a_user_package_printing_epochs_on_every_replica_has_the_chiefs_in_the_table(chief) -> None:
    """Found with the real run's files: each replica of a user's package prints untagged epoch events;
    the report's table is the chief's epochs, once, even when a worker's line came first."""
    lines = [
        event(1, "epoch", "worker-x", epoch=1, loss=9.0),
        event(2, "epoch", chief, epoch=1, loss=0.5),
        event(3, "epoch", chief, epoch=2, loss=0.25),
        event(4, "epoch", "worker-x", epoch=2, loss=9.0),
    ]
    assert [(e["epoch"], e["loss"]) for e in collect.from_parts(status(), lines, "vertex").epochs] == [
        (1, 0.5),
        (2, 0.25),
    ]
    alone = collect.from_parts(
        status(),
        [
            event(1, "epoch", "algo-2", epoch=1),
            event(2, "epoch", "algo-3", epoch=1),
            event(3, "epoch", "algo-2", epoch=2),
        ],
        "sagemaker",
    )
    assert [e["epoch"] for e in alone.epochs] == [1, 2]  # no chief's stream: the first that printed one


def test_the_saved_timeline_and_interruptions_win_over_the_logs() -> None:
    lines = [LogLine(at(100), "chief", "Processing /root/trainer.tar.gz"), LogLine(at(200), "chief", "Epoch 1/3")]
    saved_phases = [
        {
            "phase": "training",
            "start": at(0).isoformat(),
            "end": at(50).isoformat(),
            "seconds": 50.0,
            "share": 1.0,
            "cost_usd": None,
        }
    ]
    kept = collect.from_parts(status(ended=300), lines, "vertex", {"timeline": saved_phases, "interruptions": None})
    assert kept.phases == saved_phases and kept.interruptions is None
    derived = collect.from_parts(status(ended=300), lines, "vertex", {"cost_per_hour": 3.6})
    assert [(p["phase"], p["seconds"], p["cost_usd"]) for p in derived.phases] == [
        ("queued", 100.0, None),
        ("installing package", 100.0, 0.1),
        ("training", 100.0, 0.1),
    ]  # from the log
    assert derived.interruptions is None  # nothing was interrupted
    spot = status(
        interruptions=[
            {"at": at(60 * n).isoformat(), "resumed_at": at(60 * n + 30).isoformat(), "source": "SageMaker"}
            for n in (1, 2)
        ]
    )
    noted = collect.from_parts(spot, [], "sagemaker", {"interruptions": {"count": 5, "items": []}})
    assert noted.interruptions == {"count": 5, "items": []}  # what finish counted live
    counted = collect.from_parts(spot, [], "sagemaker").interruptions
    assert counted is not None and counted["count"] == 2  # else the status's own count


def test_a_sagemaker_run_is_priced_from_its_billable_seconds() -> None:
    info = catalog.resolve_machine("sagemaker", "ml.p3.2xlarge", None, None)
    assert info.price_per_hour is not None
    details = {"billable_seconds": 1800, "training_seconds": 3600, "instance_type": "ml.p3.2xlarge"}
    data = collect.from_parts(status(details), [], "sagemaker", {"cost_per_hour": 99.0})
    assert data.cost_usd == round(info.price_per_hour / 2, 4)  # the record wins over price × billed time
    assert data.cost_basis == (
        f"BillableTimeInSeconds 1800 s (all instances) × ml.p3.2xlarge ${info.price_per_hour}/h "
        f"({info.price_region} list price, {info.price_date})"
    )
    assert data.cost_per_epoch is None  # no epochs


def test_a_vertex_spot_runs_basis_carries_the_catalogs_note() -> None:
    info = catalog.resolve_machine("vertex", "n1-standard-8", None, None)
    assert info.price_per_hour is not None
    details = {
        "start_time": at(600).isoformat(),
        "end_time": at(4200).isoformat(),
        "scheduling_strategy": "SPOT",
        "pools": [{"machine_type": "n1-standard-8", "replica_count": 2}],
    }
    data = collect.from_parts(status(details), [event(700, "epoch", epoch=1), event(800, "epoch", epoch=2)], "vertex")
    assert data.cost_usd == round(2 * info.price_per_hour, 4)  # 2 machines for one hour
    assert data.cost_basis == (
        f"start_time → end_time 3600 s × (2 × n1-standard-8 ${info.price_per_hour}/h) "
        f"({info.price_region} list price, {info.price_date}); on-demand list price: the "
        "catalog has no Vertex AI spot prices, so the spot discount is not shown"
    )
    assert data.cost_per_epoch == data.cost_usd / 2


def test_without_a_billing_record_the_billed_phases_times_the_price() -> None:
    phases = [
        {"phase": "queued", "seconds": 900.0},
        {"phase": "provisioning", "seconds": 600.0},
        {"phase": "training", "seconds": 2700.0},
        {"phase": "uploading", "seconds": 300.0},
    ]
    data = collect.from_parts(status(), [], "vertex", {"cost_per_hour": 2.5, "timeline": phases})
    assert data.cost_usd == 2.5  # one hour from provisioning on; the queue is not billed
    assert (
        data.cost_basis == "billed time (from provisioning to the end) × catalog on-demand list price of every replica"
    )
    unpriced = collect.from_parts(status(), [], "vertex", {"timeline": phases})
    assert (unpriced.cost_usd, unpriced.cost_basis) == (None, "not priced (local run)")


def test_wall_time_and_steady_throughput() -> None:
    lines = [
        event(n, "epoch", epoch=n, examples_per_sec=rate)
        for n, rate in ((1, 100.0), (2, 300.0), (3, 200.0), (4, 400.0))
    ]
    data = collect.from_parts(status(ended=90), lines, "vertex")
    assert data.wall_s == 90.0
    assert data.examples_per_sec == 300.0  # the median of 300, 200, 400: the first epoch traces
    one = collect.from_parts(status(), lines[:1], "vertex")
    assert one.examples_per_sec == 100.0  # a single epoch is all there is
    assert collect.from_parts(status(), [], "vertex").examples_per_sec is None
    running = JobStatus("j-2", "j-2", JobState.RUNNING, "running", created=T0, ended=None)
    assert collect.from_parts(running, [], "vertex").wall_s is None


def test_a_runs_args_experiment_and_final_numbers_come_from_its_history_record() -> None:
    from cloudtrain.history import JobRecord

    status = JobStatus("r-1", "r-1", JobState.SUCCEEDED, "succeeded", details={"metrics": {"val_accuracy": 0.91}})
    record = JobRecord("r-1", "r-1", "local", "local", experiment="lr-study", args=["--lr=0.1"], metrics={"loss": 1})
    data = collect.from_parts(status, [], "local", {}, record)
    assert (data.experiment, data.args, data.metrics) == ("lr-study", ["--lr=0.1"], {"val_accuracy": 0.91})
    no_status_metrics = JobStatus("r-1", "r-1", JobState.SUCCEEDED, "succeeded")
    assert collect.from_parts(no_status_metrics, [], "local", {}, record).metrics == {"loss": 1.0}  # history's
