"""What ``cloudtrain status`` shows of a job: its state, what it cost, its interruptions. Nothing printed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cloudtrain.backends.base import JobHandle, JobStatus
from cloudtrain.backends.cost import cost_after
from cloudtrain.catalog.cost import Cost
from cloudtrain.errors import CloudtrainError
from cloudtrain.following.interruptions import of_status
from cloudtrain.history import load_run


@dataclass(frozen=True)
class StatusReport:
    status: JobStatus
    cost: Cost | None  # :func:`cloudtrain.backends.cost.cost_after`: None without a billing record
    interruptions: dict[str, Any] | None  # :func:`cloudtrain.following.interruptions.of_status`

    def to_dict(self) -> dict[str, Any]:
        """``cloudtrain status -o json``."""
        return (
            self.status.to_dict() | ({"cost": self.cost} if self.cost else {}) | {"interruptions": self.interruptions}
        )


def status_report(handle: JobHandle) -> StatusReport:
    status = handle.status()
    return StatusReport(status, cost_after(status), interruptions(handle, status))


def interruptions(handle: JobHandle, status: JobStatus) -> dict[str, Any] | None:
    """From what the summary kept for a job that ended here, else from the job's log (and the cloud's record)."""
    saved = load_run(status.job_id) or {}
    if status.state.terminal and "interruptions" in saved:
        kept: dict[str, Any] | None = saved["interruptions"]
        return kept
    try:
        lines = list(handle.logs(follow=False))
    except CloudtrainError:  # the log is advice here: the state and cost still show
        lines = []
    return of_status(status, lines)
