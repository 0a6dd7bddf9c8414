"""What ``cloudtrain status`` shows of a job: its state, what it cost, its interruptions. Nothing printed."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from typing import Any

from cloudtrain.backends.base import JobHandle, JobStatus, LogLine
from cloudtrain.backends.cost import cost_after
from cloudtrain.catalog.cost import Cost
from cloudtrain.errors import CloudtrainError
from cloudtrain.following.interruptions import of_status
from cloudtrain.following.progress import Progress
from cloudtrain.following.timeline import Phase, of_run
from cloudtrain.history import load_run


@dataclass(frozen=True)
class StatusReport:
    """What ``cloudtrain status`` shows: the job's status, its cost, its interruptions and its phases."""

    status: JobStatus
    cost: Cost | None  # :func:`cloudtrain.backends.cost.cost_after`: None without a billing record
    interruptions: dict[str, Any] | None  # :func:`cloudtrain.following.interruptions.of_status`
    phases: list[Phase] = field(default_factory=list)  # queued, installing, training…: from its status and lines

    def to_dict(self) -> dict[str, Any]:
        """``cloudtrain status -o json``."""
        return (
            self.status.to_dict()
            | ({"cost": self.cost} if self.cost else {})
            | {"interruptions": self.interruptions}
            | ({"phases": [p.to_dict() for p in self.phases]} if self.phases else {})
        )


def status_report(handle: JobHandle) -> StatusReport:
    """The job's status, with its interruptions and phases from its summary when it ended here, else its log."""
    status = handle.status()
    saved = (load_run(status.job_id) or {}) if status.state.terminal else {}
    lines: list[LogLine] = []
    if "interruptions" not in saved or "timeline" not in saved:
        try:
            lines = list(handle.logs(follow=False))
        except CloudtrainError:  # the log is advice here: the state and cost still show
            pass
    kept = saved["interruptions"] if "interruptions" in saved else of_status(status, lines)
    return StatusReport(status, cost_after(status), kept, _phases(status, saved.get("timeline"), lines))


def _phases(status: JobStatus, kept: Any, lines: list[LogLine]) -> list[Phase]:
    """The phases the summary kept (``kept``), else those its status and lines show."""
    if isinstance(kept, list) and kept:
        try:
            return [
                Phase(r["phase"], dt.datetime.fromisoformat(r["start"]), dt.datetime.fromisoformat(r["end"]))
                for r in kept
            ]
        except (KeyError, TypeError, ValueError):
            pass  # a damaged summary: what the lines say
    progress = Progress(cost_per_hour=None, started=status.created.timestamp() if status.created else time.time())
    progress.start_from(status)
    for line in lines:
        progress(line)
    return of_run(status, progress.marks)
