"""What a finished job cost (cloudtrain/catalog/cost.py): the cloud's record of time × the catalog price ×
every machine, spot savings only when there were some, and the price's region named when the job ran
elsewhere. Pure: statuses as the backends build them."""

from __future__ import annotations

import datetime as dt

import pytest

from cloudtrain.backends.base import JobState, JobStatus
from cloudtrain.backends.cost import cost_after
from cloudtrain.catalog.cost import Cost
from cloudtrain.spec import price_basis

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)
G4DN_12X = 4.89  # ml.g4dn.12xlarge, us-east-1
T4X4 = 2.484  # n1-standard-16 + 4 × T4, us-central1
N1_8 = 0.437  # n1-standard-8, us-central1


def status(**details) -> JobStatus:
    return JobStatus(
        "j", "j", JobState.SUCCEEDED, "done", created=T0, ended=T0 + dt.timedelta(hours=2), details=details
    )


def billed(job: JobStatus) -> Cost:
    """The cost of a job the test knows was billed and priced."""
    cost = cost_after(job)
    assert cost is not None, f"no cost for {job.details}"
    return cost


def test_sagemaker_bills_billable_seconds_at_the_instance_price() -> None:
    cost = billed(
        status(billable_seconds=7200, training_seconds=7200, instance_type="ml.g4dn.12xlarge", region="us-east-1")
    )
    assert cost == {
        "usd": round(G4DN_12X * 2, 4),
        "price_region": "us-east-1",
        "price_date": "2025-01",
        "basis": "BillableTimeInSeconds 7200 s (all instances) × ml.g4dn.12xlarge $4.89/h",
    }


def test_managed_spot_shows_what_it_saved_and_on_demand_shows_nothing_saved() -> None:
    spot = billed(status(billable_seconds=1800, training_seconds=3600, instance_type="ml.g4dn.12xlarge"))
    assert spot["usd"] == round(G4DN_12X / 2, 4)
    assert (spot["on_demand_usd"], spot["spot_savings_usd"]) == (G4DN_12X, round(G4DN_12X / 2, 4))
    same = billed(status(billable_seconds=3600, training_seconds=3600, instance_type="ml.g4dn.12xlarge"))
    assert "spot_savings_usd" not in same and "on_demand_usd" not in same


def test_the_price_region_is_named_when_the_job_ran_elsewhere() -> None:
    cost = billed(status(billable_seconds=3600, instance_type="ml.g4dn.12xlarge", region="us-west-2"))
    assert cost["price_note"] == "price of us-east-1; the job ran in us-west-2"
    assert "price_note" not in billed(
        status(billable_seconds=3600, instance_type="ml.g4dn.12xlarge", region="us-east-1")
    )


def test_vertex_bills_start_to_end_for_every_replica_of_every_pool() -> None:
    pools = [
        {
            "machine_type": "n1-standard-16",
            "accelerator_type": "NVIDIA_TESLA_T4",
            "accelerator_count": 4,
            "replica_count": 1,
        },
        {
            "machine_type": "n1-standard-16",
            "accelerator_type": "NVIDIA_TESLA_T4",
            "accelerator_count": 4,
            "replica_count": 3,
        },
        {"machine_type": "n1-standard-8", "replica_count": 2},
    ]
    start, end = T0 + dt.timedelta(minutes=10), T0 + dt.timedelta(minutes=40)
    cost = billed(status(pools=pools, start_time=start.isoformat(), end_time=end.isoformat(), region="europe-west4"))
    assert cost["usd"] == round((4 * T4X4 + 2 * N1_8) * 0.5, 4)  # 30 min, not the 2 h since created
    assert cost["basis"] == (
        "start_time → end_time 1800 s × (1 × n1-standard-16 $2.484/h + 3 × n1-standard-16 "
        "$2.484/h + 2 × n1-standard-8 $0.437/h)"
    )
    assert cost["price_note"] == "price of us-central1; the job ran in europe-west4"
    assert "note" not in cost


def test_vertex_without_an_end_time_ends_with_the_job_and_spot_says_it_is_list_price() -> None:
    pools = [{"machine_type": "n1-standard-8", "replica_count": 1}]
    cost = billed(status(pools=pools, start_time=(T0 + dt.timedelta(hours=1)).isoformat(), scheduling_strategy="SPOT"))
    assert cost["usd"] == N1_8 and "start_time → end_time 3600 s" in cost["basis"]
    assert cost["note"].startswith("on-demand list price: the catalog has no Vertex AI spot prices")
    running = JobStatus(
        "j", "j", JobState.RUNNING, "running", created=T0, details={"pools": pools, "start_time": T0.isoformat()}
    )
    assert cost_after(running) is None  # no end yet: no cost


@pytest.mark.parametrize(
    "details",
    [
        {},  # a local run: nothing billed
        {"billable_seconds": 60, "instance_type": "ml.nothing.xlarge"},  # not in the catalog
        {"pools": [{"machine_type": "n9-imaginary-4"}], "start_time": T0.isoformat()},
    ],
)
def test_no_record_or_no_price_is_no_cost_not_a_guess(details) -> None:
    assert cost_after(status(**details)) is None


def test_price_basis_says_what_a_spot_jobs_hourly_price_stands_for() -> None:
    class Spec:
        def __init__(self, backend, spot):
            self.backend, self.spot = backend, spot

    assert price_basis(Spec("vertex", False)) == "on-demand list price"
    assert price_basis(Spec("vertex", True)) == (
        "on-demand list price; spot VMs bill less, at spot rates the catalog does not carry"
    )
    assert price_basis(Spec("sagemaker", True)) == (
        "on-demand list price; managed spot bills only BillableTimeInSeconds of it, known after the job"
    )
    assert price_basis(Spec("local", True)) == "on-demand list price; spot bills less"
