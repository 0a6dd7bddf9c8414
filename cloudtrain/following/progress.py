"""Where a streaming job stands, from its log lines: :class:`Progress` keeps phase, epoch, steps, loss, metric,
examples/s, ETA, elapsed time and cost; no events still gives phase, elapsed and cost. The clock is passed in."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cloudtrain.following.events import parse as parse_event
from cloudtrain.following.interruptions import Tracker
from cloudtrain.following.timeline import SETUP_PHASES, mark_line, training_start
from cloudtrain.text.numbers import count, human_seconds, measured, money

METRICS = ("val_accuracy", "accuracy", "val_loss")  # the first one present is "the main metric"


@dataclass
class Snapshot:
    phase: str
    elapsed_s: float
    cost_usd: float | None
    epoch: int | None = None
    epochs: int | None = None
    steps: int | None = None
    loss: float | None = None
    metric: tuple[str, float] | None = None
    examples_per_sec: float | None = None
    eta_s: float | None = None
    interruptions: int | None = None  # preemptions / restarts seen so far

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if v is not None}
        if self.metric:
            out["metric"] = {"name": self.metric[0], "value": self.metric[1]}
        return out

    def line(self) -> str:
        parts = [self.phase]
        if self.epoch is not None:
            parts.append(f"epoch {self.epoch}/{self.epochs}" if self.epochs else f"epoch {self.epoch}")
        if self.steps is not None:
            parts.append(f"step {count(self.steps)}")
        if self.loss is not None:
            parts.append(f"loss {measured(self.loss)}")
        if self.metric is not None:
            parts.append(f"{self.metric[0]} {measured(self.metric[1])}")
        if self.examples_per_sec is not None:
            parts.append(f"{measured(self.examples_per_sec)} ex/s")
        if self.eta_s is not None:
            parts.append(f"ETA {human_seconds(self.eta_s)}")
        if self.interruptions:
            parts.append(f"{self.interruptions} interruption" + ("s" if self.interruptions > 1 else ""))
        parts.append(f"elapsed {human_seconds(self.elapsed_s)}")
        if self.cost_usd is not None:
            parts.append(money(self.cost_usd))
        return " · ".join(parts)


@dataclass
class Progress:
    cost_per_hour: float | None  # the whole job (every replica), catalog price; None: local or unknown
    started: float  # clock() when the job was created
    phase: str = "queued"
    clock: Callable[[], float] = time.time
    _epoch: dict[str, Any] = field(default_factory=dict)
    _rates: dict[str, float] = field(default_factory=dict)  # replica → its latest examples/s
    _epoch_times: list[float] = field(default_factory=list)
    _steps_before: int = 0
    _billing_from: float | None = None  # machines bill from provisioning on
    marks: dict[str, Any] = field(
        default_factory=dict
    )  # timeline marks seen in the lines (cloudtrain.following.timeline)
    interruptions: Tracker = field(default_factory=Tracker)  # preemptions and restarts seen in the lines
    epochs: int | None = None  # the job's --epochs: the total when its events give none
    uploads: bool = True  # False: the job uploads nothing (a local run), so its done event starts no upload

    def start_from(self, status: Any) -> None:
        """The phase of a job's status (a JobStatus) before its first line, and whether it uploads."""
        self.set_phase(phase_of(status))
        self.uploads = status.detail("uploads_outputs") is not False

    def set_phase(self, phase: str) -> None:
        """From the job's state (queued / provisioning) before any line arrives."""
        if phase != "queued" and self._billing_from is None:
            self._billing_from = self.clock()
        self.phase = phase

    def __call__(self, line: Any) -> None:
        if self.phase in ("queued", "provisioning", "pulling image"):
            self.set_phase("installing package")  # the container runs: it has its image
        mark_line(self.marks, line)
        if self.phase in SETUP_PHASES and training_start(self.marks) is not None:
            self.set_phase("training")  # the user's code runs, plan event or not: the timeline's rule, on this line
        self.interruptions(line)
        event = parse_event(line.message)
        if event is None:
            return
        kind = event.get("event")
        if kind == "plan":
            self.set_phase("training")
            self._epoch.setdefault("epochs", (event.get("args") or {}).get("epochs") or event.get("epochs"))
        elif kind == "epoch":
            self.set_phase("training")
            self._epoch.update({k: v for k, v in event.items() if isinstance(v, (int, float))})
            self._steps_before += int(event.get("steps") or 0)
            if isinstance(event.get("examples_per_sec"), (int, float)):
                self._rates[event.get("replica") or line.replica] = float(event["examples_per_sec"])
            if isinstance(event.get("epoch_time_s"), (int, float)):
                self._epoch_times.append(float(event["epoch_time_s"]))
        elif kind in ("done", "worker_done") and self.uploads:
            self.set_phase("uploading")

    def snapshot(self) -> Snapshot:
        now = self.clock()
        billed = 0.0 if self._billing_from is None else now - self._billing_from
        cost = None if self.cost_per_hour is None else self.cost_per_hour * billed / 3600
        epoch, epochs = self._epoch.get("epoch"), self._epoch.get("epochs") or self.epochs
        eta = None
        if epoch and epochs and self._epoch_times and self.phase == "training":
            recent = self._epoch_times[-3:]
            eta = max(0.0, (epochs - epoch) * sum(recent) / len(recent))
        metric = next(
            ((m, float(self._epoch[m])) for m in METRICS if isinstance(self._epoch.get(m), (int, float))), None
        )
        return Snapshot(
            phase=self.phase,
            elapsed_s=max(0.0, now - self.started),
            cost_usd=cost,
            epoch=epoch,
            epochs=epochs,
            steps=self._steps_before or None,
            loss=self._epoch.get("loss"),
            metric=metric,
            examples_per_sec=sum(self._rates.values()) if self._rates else None,
            eta_s=eta,
            interruptions=len(self.interruptions.items) or None,
        )


def phase_of(status: Any) -> str:
    """The phase a job is in before its first log line, from its status (a JobStatus): why the scheduler
    holds it, else the phase its platform reports (``JobStatus.phase``), else its state's."""
    if waiting_for := status.detail("waiting_for"):  # why the scheduler holds it (Resources, Priority, QOS…)
        return f"queued: {waiting_for}"
    if phase := status.detail("phase"):
        return str(phase)
    if status.state.value == "PENDING":
        return "provisioning"
    return "installing package" if status.state.value == "RUNNING" else "queued"
