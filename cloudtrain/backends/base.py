"""The one interface every backend implements, and the shared job-state vocabulary.

A backend is one folder: a package exposing ``BACKEND`` (a :class:`Backend`), registered by
one line in :mod:`cloudtrain.backends`. It owns its facts (config section, storage schemes,
runtime limit, name rule, how its job ids look and which location they need, how its machines
compare across clouds) and imports its cloud SDK only inside the methods that talk to the
cloud, so that ``cloudtrain --help`` and ``--dry-run`` never pay for it.
:class:`BackendFacts` and :class:`HandleDefaults` give every member a neutral default, so a
backend states only what differs. See docs/explanation/adding-a-backend.md.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from cloudtrain.errors import ExitCode
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec

if TYPE_CHECKING:
    from cloudtrain.backends.environment import EnvironmentContract


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
    started: dt.datetime | None = None
    billable_seconds: float | None = None
    phase_marks: Mapping[str, dt.datetime] | None = None  # phase name -> when it began
    first_phase: str = "queued"  # the phase a job is in from ``created`` until its first mark

    def detail(self, key: str) -> Any:
        """A typed field, else the display detail of that name (status files written before it was typed)."""
        value = getattr(self, key, None) if key in _TYPED else None
        return self.details.get(key) if value is None else value

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


_TYPED = ("output_dir", "checkpoint_dir", "started", "billable_seconds", "phase_marks")


@dataclass(frozen=True)
class Hardware:
    """A machine described without naming its cloud, for cross-cloud mapping."""

    accelerator: str | None  # the chip, as the catalog names it across clouds ("A100-40GB"), None: CPU only
    accelerator_count: int
    vcpus: int
    memory_gb: float


class JobHandle(Protocol):
    job_id: str
    backend_name: str  # the registry name, for the reattach hint
    location: Mapping[str, str]  # what ``attach`` needs besides the id: {"project": …, "region": …}, {} locally
    stops_gracefully: bool  # cancel asks replicas to checkpoint first; ``kill`` stops them at once

    def status(self) -> JobStatus: ...

    def logs(self, follow: bool = False, drain: float | None = None) -> Iterator[LogLine]:
        """Lines in order per replica; with ``follow``, ends once the job is terminal and, where the
        cloud delivers lines late, ``drain`` seconds (None: the backend's default) passed with nothing new."""
        ...

    def wait(self) -> JobStatus: ...

    def cancel(self) -> JobStatus:
        """Ask the cloud to stop the job and return its status right after."""
        ...

    def kill(self) -> JobStatus:
        """Stop every replica now (only where ``stops_gracefully``)."""
        ...

    def model_outputs_warning(self, status: JobStatus) -> str | None:
        """After success: a warning when the model location holds nothing (None: fine or not checkable)."""
        ...


class HandleDefaults:
    """Neutral defaults for the optional members of :class:`JobHandle`."""

    backend_name: ClassVar[str] = ""
    stops_gracefully: ClassVar[bool] = False

    @property
    def location(self) -> Mapping[str, str]:
        return {}

    def kill(self) -> JobStatus:
        return self.cancel()  # type: ignore[attr-defined]

    def model_outputs_warning(self, status: JobStatus) -> str | None:
        return None


class Backend(Protocol):
    name: str
    title: str  # the engine's name in messages ("Vertex AI", "SageMaker")
    section: str | None  # the YAML section of its own keys (``<name>:``); None: top-level keys (vertex, sagemaker)
    required_keys: tuple[str, ...]  # top-level config keys a job on it needs
    location_keys: tuple[str, ...]  # what attach / list_jobs / history need to find a job
    storage_schemes: tuple[str, ...]  # URI schemes its machines read and write ("gs", "s3"); () local paths only
    max_runtime_seconds: int | None  # the longest job it accepts
    job_name_limit: int | None  # the longest job name it accepts
    local_contract: EnvironmentContract | None  # what its machines show a job, for ``--local``; None: not followed

    def check(self, config: Any) -> list[str]:
        """Offline problems of a config for this backend, one line each (no network)."""
        ...

    def job_name(self, name: str, tail: str) -> str:
        """The job's name from the config's ``name`` and the per-submit ``tail``, under its name rule."""
        ...

    def parse_job_id(self, text: str) -> tuple[str, dict[str, str]] | None:
        """``(short id, location)`` when ``text`` is one of this backend's full job names, else None."""
        ...

    def describe(self, machine: Mapping[str, Any]) -> Hardware | None:
        """One of its machines (a config's ``machine:`` mapping) as neutral hardware; None: not one of its own."""
        ...

    def nearest(self, hardware: Hardware) -> list[dict[str, Any]]:
        """Its machines closest to ``hardware``, best first, each as a config's ``machine:`` mapping."""
        ...

    def label(self, replica: str) -> str:
        """How a replica's lines are labelled on the terminal."""
        ...

    def render(self, spec: JobSpec, package: BuiltPackage) -> dict[str, Any]:
        """The exact request ``submit`` would send, as JSON-ready data. Pure: no I/O."""
        ...

    def submit(self, spec: JobSpec, package: BuiltPackage) -> JobHandle: ...

    def submit_detached(self, spec: JobSpec, package: BuiltPackage) -> JobHandle:
        """``submit --detach``: a job that keeps running after this process returns."""
        ...

    def attach(self, job_id: str, *, region: str | None = None, project: str | None = None) -> JobHandle:
        """A handle on an existing job; only the ``location_keys`` it declares are required."""
        ...

    def attach_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> Any:
        """A handle on an existing sweep (tuning job)."""
        ...

    def list_jobs(
        self, *, region: str | None = None, project: str | None = None, limit: int = 20
    ) -> list[JobStatus]: ...

    def translate(self, loaded: Any) -> tuple[dict[str, Any], list[str]] | None:
        """A parsed config document in one of its own formats (ML Engine's ``trainingInput``, a
        ``CustomJobSpec``) as cloudtrain's keys and the ``mapped:`` notes; None: in none of them."""
        ...


class BackendFacts:
    """Neutral defaults for a backend's facts; a backend class inherits this and overrides what differs."""

    title: ClassVar[str] = ""  # the engine's name in messages ("Vertex AI")
    section: ClassVar[str | None] = None
    required_keys: ClassVar[tuple[str, ...]] = ()
    location_keys: ClassVar[tuple[str, ...]] = ()
    storage_schemes: ClassVar[tuple[str, ...]] = ()
    max_runtime_seconds: ClassVar[int | None] = None
    job_name_limit: ClassVar[int | None] = None
    job_id_pattern: ClassVar[re.Pattern[str] | None] = None  # named groups: ``id`` and the location keys
    local_contract: ClassVar[EnvironmentContract | None] = None

    def field_checks(self, loaded: Any) -> list[tuple[tuple[str, ...], Any]]:
        """Checks of the location and machine keys for a backend that has no catalog of regions and
        machines (a cluster): ``(fields, check)`` pairs for the config checker; empty: the catalog's checks."""
        return []

    def check(self, config: Any) -> list[str]:
        return []

    def job_name(self, name: str, tail: str) -> str:
        """``name`` + ``tail`` (the per-submit stamp), ``name`` cut so the whole fits ``job_name_limit``."""
        if self.job_name_limit is not None:
            name = name[: self.job_name_limit - len(tail)].rstrip("-_")
        return name + tail

    def parse_job_id(self, text: str) -> tuple[str, dict[str, str]] | None:
        match = self.job_id_pattern.match(text) if self.job_id_pattern else None
        if match is None:
            return None
        return match["id"], {k: match[k] for k in self.location_keys if k in match.groupdict()}

    def describe(self, machine: Mapping[str, Any]) -> Hardware | None:
        return None

    def nearest(self, hardware: Hardware) -> list[dict[str, Any]]:
        return []

    def label(self, replica: str) -> str:
        return replica

    def translate(self, loaded: Any) -> tuple[dict[str, Any], list[str]] | None:
        return None

    def submit_detached(self, spec: JobSpec, package: BuiltPackage) -> Any:  # Any: each backend's own handle
        """A cloud's job runs on without its submitter: the same as ``submit``."""
        return self.submit(spec, package)  # type: ignore[attr-defined]

    def attach_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> Any:
        from cloudtrain.errors import UsageError

        raise UsageError(
            f"backend {getattr(self, 'name', '?')!r} has no sweeps", hint="run the sweep on another backend"
        )


class CatalogMachines:
    """``describe`` / ``nearest`` for a backend whose machines are in ``cloudtrain/catalog`` under its name."""

    name: str

    def describe(self, machine: Mapping[str, Any]) -> Hardware | None:
        from cloudtrain import catalog
        from cloudtrain.catalog.table import table

        kind = machine.get("type")
        if not isinstance(kind, str) or kind not in table(self.name).types:
            return None
        try:
            info = catalog.resolve_machine(
                self.name, kind, machine.get("accelerator"), machine.get("accelerator_count")
            )
        except catalog.CatalogError:
            return None  # invalid on its own cloud too: validation names the problem
        return Hardware(info.gpu.name if info.gpu else None, info.accelerator_count, info.vcpus, info.memory_gb)

    def nearest(self, hardware: Hardware) -> list[dict[str, Any]]:
        from cloudtrain.catalog.crosscloud import nearest_machine

        found = nearest_machine(
            self.name, hardware.accelerator, hardware.accelerator_count, hardware.vcpus, hardware.memory_gb
        )
        return [self.machine_of(found)]

    def machine_of(self, info: Any) -> dict[str, Any]:
        """A catalog machine as the ``machine:`` mapping this backend's configs write."""
        return {"type": info.machine_type}


def poll_until_terminal(status: Any, sleep: Any, seconds: float) -> JobStatus:
    """Call ``status()`` every ``seconds`` until the job has ended; its last status."""
    while not (current := status()).state.terminal:
        sleep(seconds)
    return current
