"""The one small interface every backend implements, and the shared job-state vocabulary.

A backend is a module exposing ``BACKEND`` (an object with ``render``, ``submit``,
``attach`` and ``list_jobs``); it imports its cloud SDK only inside those methods so that
``cloudtrain --help`` and ``--dry-run`` never pay for it.
"""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Protocol

from cloudtrain.errors import ExitCode
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec


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
        return self in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED, JobState.PREEMPTED,
                        JobState.TIMED_OUT)

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


class JobHandle(Protocol):
    job_id: str

    def status(self) -> JobStatus: ...

    def logs(self, follow: bool = False, drain: float | None = None) -> Iterator[LogLine]:
        """Lines in order per replica; with ``follow``, ends once the job is terminal and, where the
        cloud delivers lines late, ``drain`` seconds (None: the backend's default) passed with nothing new."""
        ...

    def wait(self) -> JobStatus: ...

    def cancel(self) -> JobStatus:
        """Ask the cloud to stop the job and return its status right after."""
        ...


class Backend(Protocol):
    name: str

    def render(self, spec: JobSpec, package: BuiltPackage) -> dict[str, Any]:
        """The exact request ``submit`` would send, as JSON-ready data. Pure: no I/O."""
        ...

    def submit(self, spec: JobSpec, package: BuiltPackage) -> JobHandle: ...

    def attach(self, job_id: str, *, region: str, project: str | None = None) -> JobHandle: ...

    def list_jobs(self, *, region: str, project: str | None = None, limit: int = 20) -> list[JobStatus]: ...


def poll_until_terminal(status: Any, sleep: Any, seconds: float) -> JobStatus:
    """Call ``status()`` every ``seconds`` until the job has ended; its last status."""
    while not (current := status()).state.terminal:
        sleep(seconds)
    return current
