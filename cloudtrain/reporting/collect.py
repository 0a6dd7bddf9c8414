"""A run's numbers for the report: status, epochs, throughput per replica, phases and cost."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from cloudtrain.backends.cost import cost_after
from cloudtrain.following import timeline
from cloudtrain.following.events import parse as parse_event
from cloudtrain.following.interruptions import of_status
from cloudtrain.history import JobRecord
from cloudtrain.job_states import JobStatus, LogLine

CHIEF_STREAMS = ("chief", "workerpool0-0", "algo-1")  # the chief's log source: local, Vertex AI, SageMaker


@dataclass
class RunData:
    job_id: str
    backend: str
    state: str
    created: dt.datetime | None
    ended: dt.datetime | None
    machine: str | None = None
    replicas: int | None = None
    epochs: list[dict[str, Any]] = field(default_factory=list)  # the chief's epoch events, in order
    rates: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # replica → (train s, examples/s)
    phases: list[dict[str, Any]] = field(default_factory=list)  # timeline.cost_shares rows
    cost_per_hour: float | None = None
    cost_usd: float | None = None
    cost_basis: str = "not priced (local run)"
    price_note: str | None = None
    trials: list[dict[str, Any]] = field(default_factory=list)  # a sweep's trials
    metric: str | None = None  # the metric a sweep's trials report
    scales: dict[str, str] = field(default_factory=dict)  # a sweep's parameter → its scale (linear, log…)
    interruptions: dict[str, Any] | None = None  # cloudtrain.following.interruptions.summarize
    experiment: str | None = None  # the config's experiment:
    args: list[str] = field(default_factory=list)  # what its code ran with (history's record, secrets ***)
    metrics: dict[str, float] = field(default_factory=dict)  # its final numbers

    def final_and_best(self, metric: str) -> tuple[float | None, float | None]:
        """``metric`` at the run's end (final numbers, else last epoch) and at its best epoch (lowest for a loss)."""
        values = [e[metric] for e in self.epochs if isinstance(e.get(metric), (int, float))]
        final = self.metrics.get(metric, values[-1] if values else None)
        pick = min if "loss" in metric else max
        best = pick([*values, *([final] if final is not None else [])]) if values or final is not None else None
        return final, best

    def interruption_offsets(self) -> list[tuple[float, float | None]]:
        """Each interruption as (seconds since created when it stopped, when it resumed), for the timeline."""
        if self.created is None or not self.interruptions:
            return []
        out = []
        for item in self.interruptions.get("items", []):
            at, back = (dt.datetime.fromisoformat(v) if v else None for v in (item.get("at"), item.get("resumed_at")))
            if at is not None:
                out.append(
                    (
                        (at - self.created).total_seconds(),
                        None if back is None else (back - self.created).total_seconds(),
                    )
                )
        return out

    @property
    def wall_s(self) -> float | None:
        if self.created and self.ended:
            return (self.ended - self.created).total_seconds()
        return None

    @property
    def examples_per_sec(self) -> float | None:
        """Steady throughput: the median of the epochs after the first (which includes tracing)."""
        values = sorted(
            e["examples_per_sec"]
            for e in self.epochs[1:] or self.epochs
            if isinstance(e.get("examples_per_sec"), (int, float))
        )
        return values[len(values) // 2] if values else None

    @property
    def cost_per_epoch(self) -> float | None:
        return None if self.cost_usd is None or not self.epochs else self.cost_usd / len(self.epochs)


def from_parts(
    status: JobStatus,
    lines: list[LogLine],
    backend: str,
    saved: dict[str, Any] | None = None,
    record: JobRecord | None = None,
) -> RunData:
    """The pure part: a status, its log lines, what ``finish`` saved and history's record → :class:`RunData`."""
    saved = saved or {}
    data = RunData(status.job_id, backend, status.state.value, status.created, status.ended)
    if record is not None:
        data.experiment, data.args = record.experiment, list(record.args or [])
    metrics = status.detail("metrics")
    if not isinstance(metrics, dict) or not metrics:
        metrics = (record.metrics if record is not None else None) or {}
    data.metrics = {k: float(v) for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    data.replicas = status.detail("replica_count")
    data.machine = status.detail("machine_type")
    elapsed: dict[str, float] = {}
    untagged: dict[str, list[dict[str, Any]]] = {}  # source → its epoch events that name no replica
    for line in lines:
        event = parse_event(line.message)
        if event and event.get("event") == "plan" and isinstance(event.get("replicas"), int):
            data.replicas = event["replicas"]  # tf.distribute replicas in sync: GPUs (or CPUs) × machines
        if not event or event.get("event") != "epoch":
            continue
        replica = event.get("replica") or line.replica
        elapsed[replica] = elapsed.get(replica, 0.0) + float(event.get("epoch_time_s") or 0.0)
        if isinstance(event.get("examples_per_sec"), (int, float)):
            data.rates.setdefault(replica, []).append((round(elapsed[replica], 3), float(event["examples_per_sec"])))
        if not event.get("replica"):
            untagged.setdefault(line.replica, []).append(event)
    data.epochs = _chiefs(untagged)
    data.cost_per_hour = saved.get("cost_per_hour")
    if saved.get("timeline"):  # observed live, line by line: better times than a finished log's
        data.phases = saved["timeline"]
    else:
        data.phases = timeline.cost_shares(timeline.of_run(status, timeline.log_marks(lines)), data.cost_per_hour)
    if "interruptions" in saved:  # what finish saw live
        data.interruptions = saved["interruptions"]
    else:
        data.interruptions = of_status(status, lines)
    _price(data, status)
    return data


def _chiefs(untagged: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The chief's epochs where every replica prints events: its stream by name, else the first that printed."""
    chief = next((name for name in CHIEF_STREAMS if name in untagged), next(iter(untagged), None))
    return [] if chief is None else untagged[chief]  # chief None: no epoch events at all


def _price(data: RunData, status: JobStatus) -> None:
    gpu_hours = status.detail("gpu_hours")
    if gpu_hours is not None:  # a cluster (Slurm): GPU-hours in place of dollars
        data.cost_basis = f"{gpu_hours:g} GPU-hours, from {status.detail('gpu_hours_source')}"
        return
    recorded = cost_after(status)
    if recorded is not None:  # the cloud's own record of time × the catalog price
        data.cost_usd = recorded["usd"]
        data.cost_basis = f"{recorded['basis']} ({recorded['price_region']} list price, {recorded['price_date']})" + (
            f"; {recorded['note']}" if recorded.get("note") else ""
        )
        return
    if data.cost_per_hour is None:
        return
    billed = sum(p["seconds"] for p in data.phases if p["phase"] != "queued")
    data.cost_usd = data.cost_per_hour * billed / 3600
    data.cost_basis = "billed time (from provisioning to the end) × catalog on-demand list price of every replica"


def from_sweep(job_id: str, backend: str, table: Any) -> RunData:
    """A sweep's row of the report: its trials (a :class:`~cloudtrain.sweeps.results.SweepResults`)."""
    data = RunData(job_id, backend, table.state, None, None, cost_basis="see each trial", metric=table.metric)
    data.trials = [t.__dict__ | {"best": table.best is t} for t in table.trials]
    data.scales = dict(getattr(table, "scales", None) or {})
    return data
