"""The job-state vocabulary every floor speaks: a job's state, its status and one line of its output."""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field, fields
from typing import Any

from cloudtrain.errors import ExitCode
from cloudtrain.following.events import parse as parse_event
from cloudtrain.secrets.masking import ValueMasker, masked


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

    @property
    def event(self) -> dict[str, Any] | None:
        """The trainer's progress event on this line (``{"event": "epoch", "epoch": 3, …}``), parsed; else None."""
        return parse_event(self.message)


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
    # Typed fields for what other modules read (each backend fills them); ``details`` is for display.
    output_dir: str | None = None
    checkpoint_dir: str | None = None
    started: dt.datetime | None = None  # the machines run (Vertex AI's start_time): the image is being pulled
    billable_seconds: float | None = None
    phase_marks: Mapping[str, dt.datetime] | None = None  # phase name -> when it began
    #: The machines the platform took back and when it resumed: ``[{"at", "resumed_at", "source"}]``
    interruptions: Sequence[Mapping[str, Any]] | None = None
    waiting_for: str | None = None  # why a queued job waits, as the scheduler says (Resources, Priority)
    first_phase: str = "queued"  # the phase a job is in from ``created`` until its first mark
    #: The phase the platform reports before the first log line (``queued``, …); None: the state's.
    phase: str | None = None
    machine_type: str | None = None  # what every replica runs on, in the backend's words (the run report)
    replica_count: int | None = None  # the machines (replicas) the job runs on
    gpu_hours: float | None = None  # GPU-hours used, where the backend counts them instead of dollars (a cluster)
    gpu_hours_source: str | None = None  # where ``gpu_hours`` come from, as the run report says it
    #: The job's secret values as its backend knows them, not kept: every text but job_id and name shows *** for them.
    secret_values: InitVar[Iterable[str]] = ()

    def __post_init__(self, secret_values: Iterable[str]) -> None:
        mask = ValueMasker(secret_values)
        for f in fields(self)[2:]:
            object.__setattr__(self, f.name, masked(getattr(self, f.name), mask))

    def detail(self, key: str) -> Any:
        """A typed field (each backend fills them), else the display detail ``key``."""
        return getattr(self, key) if key in _FIELDS else self.details.get(key)

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


_FIELDS = frozenset(f.name for f in fields(JobStatus)) - {"details"}
