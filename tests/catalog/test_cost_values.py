"""What a job cost, to the cent's hundredth, and when there is no cost yet (cloudtrain/catalog/cost.py):
the values ``cloudtrain status -o json`` prints under ``cost``. Each test kills a mutant that
tests/catalog/test_cost_after.py let live (docs/how-to/mutation-testing.md)."""

from __future__ import annotations

import datetime as dt

from cloudtrain.backends.base import JobState, JobStatus
from cloudtrain.backends.cost import cost_after
from cloudtrain.catalog.cost import Cost
from cloudtrain.spec import price_basis

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)
N1_8 = 0.437  # n1-standard-8, us-central1 ($/h)


def job(state: JobState = JobState.SUCCEEDED, **details) -> JobStatus:
    return JobStatus("j", "j", state, "", created=T0, ended=T0 + dt.timedelta(hours=2), details=details)


def billed(status: JobStatus) -> Cost:
    cost = cost_after(status)
    assert cost is not None
    return cost


def test_a_sagemaker_job_not_billed_yet_has_no_cost() -> None:
    """Running: the instance type is known, BillableTimeInSeconds is not (None until the job ends)."""
    running = job(JobState.RUNNING, billable_seconds=None, training_seconds=None, instance_type="ml.g4dn.12xlarge")
    assert cost_after(running) is None


def test_a_vertex_job_that_has_not_started_has_no_cost() -> None:
    """Pending: its pools are known, its ``start_time`` is not."""
    pending = job(JobState.PENDING, pools=[{"machine_type": "n1-standard-8", "replica_count": 1}])
    assert cost_after(pending) is None


def test_sagemaker_figures_are_rounded_to_four_decimals() -> None:
    # ml.g4dn.12xlarge $4.89/h: billed 100 s = $0.135833…; on demand 250 s = $0.339583…; saved $0.203783…
    cost = billed(job(billable_seconds=100, training_seconds=250, instance_type="ml.g4dn.12xlarge"))
    assert (cost["usd"], cost["on_demand_usd"], cost["spot_savings_usd"]) == (0.1358, 0.3396, 0.2038)


def test_vertex_figures_are_rounded_to_four_decimals_and_a_pool_without_a_count_is_one_machine() -> None:
    # 7 minutes of one n1-standard-8 at $0.437/h = $0.0509833…
    start, end = T0, T0 + dt.timedelta(minutes=7)
    pools = [{"machine_type": "n1-standard-8"}]  # no replica_count: the chief pool's one machine
    cost = billed(job(pools=pools, start_time=start.isoformat(), end_time=end.isoformat()))
    assert cost["usd"] == 0.051
    assert cost["basis"] == "start_time → end_time 420 s × (1 × n1-standard-8 $0.437/h)"


def test_a_vertex_job_that_ended_as_it_started_cost_nothing() -> None:
    same = T0.isoformat()
    cost = billed(job(pools=[{"machine_type": "n1-standard-8", "replica_count": 1}], start_time=same, end_time=same))
    assert cost["usd"] == 0.0
    assert cost["basis"] == "start_time → end_time 0 s × (1 × n1-standard-8 $0.437/h)"


def test_a_spec_that_says_nothing_about_spot_is_priced_on_demand() -> None:
    class Spec:
        backend = "vertex"

    assert price_basis(Spec()) == "on-demand list price"
