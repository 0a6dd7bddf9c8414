"""The job-state vocabulary every floor speaks: a job's state, its status and one line of its output.

Each backend maps its native states onto :class:`JobState` through one table (``backends/<name>/``); the
console, history and the reports read :class:`JobStatus` and :class:`LogLine` without loading a backend.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cloudtrain.errors import ExitCode


class JobState(enum.Enum):
    """Every backend maps its native states onto these through one table."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    STOPPING = "STOPPING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    PREEMPTED = "PREEMPTED"  # the platform stopped it (spot reclaim, SIGTERM from outside)
    TIMED_OUT = "TIMED_OUT"  # stopped by max_runtime
    UNKNOWN = "UNKNOWN"

    @property
    def terminal(self) -> bool:
        return self in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED, JobState.PREEMPTED, JobState.TIMED_OUT)

    @property
    def exit_code(self) -> int:
        """The CLI's exit code for a job that ended in this state (errors.ExitCode)."""
        return {
            JobState.SUCCEEDED: ExitCode.OK,
            JobState.CANCELLED: ExitCode.INTERRUPTED,
            JobState.PREEMPTED: ExitCode.PREEMPTED,
            JobState.TIMED_OUT: ExitCode.TIMED_OUT,
        }.get(self, ExitCode.JOB_FAILED)


@dataclass(frozen=True)
class LogLine:
    """One line of a job's output, from whichever replica wrote it."""

    timestamp: dt.datetime
    replica: str  # "workerpool0-0" on Vertex, "algo-1" on SageMaker, "worker-0" locally
    message: str
    severity: str = "INFO"
    late: bool = False  # arrived after later lines of its replica were already printed
    receive_timestamp: dt.datetime | None = None  # when the cloud's log service received it, where known


@dataclass(frozen=True)
class JobStatus:
    job_id: str  # the short id users type
    name: str  # the cloud's full resource name / ARN
    state: JobState
    native_state: str
    message: str | None = None  # the cloud's error / failure reason
    console_url: str | None = None
    created: dt.datetime | None = None
    ended: dt.datetime | None = None
    details: Mapping[str, Any] = field(default_factory=dict)  # billable seconds, spot savings, …
    # Typed fields for what other modules read; ``details`` is for display. Each falls back to
    # the detail key a backend has always written, so old local status files still read.
    output_dir: str | None = None
    checkpoint_dir: str | None = None
    started: dt.datetime | None = None  # the machines run (Vertex AI's start_time): the image is being pulled
    billable_seconds: float | None = None
    phase_marks: Mapping[str, dt.datetime] | None = None  # phase name -> when it began
    #: The machines the platform took back and when it resumed: ``[{"at", "resumed_at", "source"}]``
    interruptions: Sequence[Mapping[str, Any]] | None = None
    waiting_for: str | None = None  # why a queued job waits, as the scheduler says (Resources, Priority)
    first_phase: str = "queued"  # the phase a job is in from ``created`` until its first mark
    #: The phase the platform reports before the job's first log line, in the timeline's words
    #: (``queued``, ``provisioning``, ``pulling image``); None: the state's (PENDING: provisioning).
    phase: str | None = None
    machine_type: str | None = None  # what every replica runs on, in the backend's words (the run report)
    replica_count: int | None = None  # the machines (replicas) the job runs on
    gpu_hours: float | None = None  # GPU-hours used, where the backend counts them instead of dollars (a cluster)
    gpu_hours_source: str | None = None  # where ``gpu_hours`` come from, as the run report says it

    def detail(self, key: str) -> Any:
        """A typed field, else the display detail a backend has written it as (status files written
        before it was typed, backends that fill only ``details``)."""
        value = getattr(self, key, None) if key in _TYPED else None
        if value is not None:
            return value
        legacy = _TYPED.get(key)
        return self.details.get(key) if legacy is None else legacy(self)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, for ``-o json`` and the local backend's status file."""
        return {
            "job_id": self.job_id,
            "name": self.name,
            "state": self.state.value,
            "native_state": self.native_state,
            "message": self.message,
            "console_url": self.console_url,
            "created": self.created.isoformat() if self.created else None,
            "ended": self.ended.isoformat() if self.ended else None,
            "details": dict(self.details),
        }


def _written(key: str, convert: Callable[[Any], Any] = lambda value: value) -> Callable[[JobStatus], Any]:
    """A reader of the detail ``key`` (None when absent), its value as the typed field holds it (an
    empty value as it is)."""

    def read(status: JobStatus) -> Any:
        value = status.details.get(key)
        return convert(value) if value else value

    return read


def _time(value: Any) -> dt.datetime:
    return dt.datetime.fromisoformat(value) if isinstance(value, str) else value


def _replicas_written(status: JobStatus) -> int | None:
    """A local run's replica names (its status file), else SageMaker's instance count."""
    return len(status.details.get("replicas") or []) or status.details.get("instance_count")


def _phase_written(status: JobStatus) -> str | None:
    """The phase before the first line as statuses carried it before ``phase`` was typed: a native
    state that says it is queued (Vertex AI's JOB_STATE_QUEUED), else a pending SageMaker job's
    secondary status (``timeline.SAGEMAKER_PHASES``)."""
    if "QUEUED" in str(status.native_state or "").upper():
        return "queued"
    if status.state is not JobState.PENDING:
        return None
    from cloudtrain.following.timeline import SAGEMAKER_PHASES  # a status's phase (the follower's): not on a dry run

    return SAGEMAKER_PHASES.get(str(status.details.get("secondary_status") or ""))


#: Typed field -> how the detail a backend has always written it as reads (status files written before
#: the field was typed, backends that fill only ``details``).
_TYPED: dict[str, Callable[[JobStatus], Any]] = {
    "output_dir": _written("output_dir"),
    "checkpoint_dir": _written("checkpoint_dir"),
    "started": _written("start_time", _time),
    "billable_seconds": _written("billable_seconds"),
    "phase_marks": _written("phase_marks", lambda marks: {k: _time(v) for k, v in marks.items()}),
    "interruptions": _written("spot_interruptions"),
    "waiting_for": _written("pending_reason"),
    "phase": _phase_written,
    "machine_type": _written("instance_type"),
    "replica_count": _replicas_written,
    "gpu_hours": _written("gpu_hours"),
    "gpu_hours_source": _written("gpu_hours_source"),
}
