"""The one interface every backend implements, and the shared job-state vocabulary.

A backend is one folder: a package exposing ``BACKEND`` (a :class:`Backend`), registered by
one line in :mod:`cloudtrain.backends`. It owns its facts (config section, storage schemes,
runtime limit, name rule, how its job ids look and which location they need, how its machines
compare across clouds) and imports its cloud SDK only inside the methods that talk to the
cloud, so that ``cloudtrain --help`` and ``--dry-run`` never pay for it.
:class:`BackendFacts` and :class:`HandleDefaults` give every member a neutral default, so a
backend states only what differs. See docs/how-to/add-a-backend.md.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from cloudtrain import catalog
from cloudtrain.catalog.crosscloud import nearest_machine
from cloudtrain.catalog.records import MachineInfo
from cloudtrain.catalog.table import table
from cloudtrain.errors import ExitCode, UsageError
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import BackendSettings, JobSpec

if TYPE_CHECKING:
    from cloudtrain.backends.environment import EnvironmentContract
    from cloudtrain.backends.files import JobFiles
    from cloudtrain.data.stores import GcsStore, S3Store


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
    from cloudtrain.timeline import SAGEMAKER_PHASES  # a status's phase (the follower's): not on a dry run

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


@dataclass(frozen=True)
class Hardware:
    """A machine described without naming its cloud, for cross-cloud mapping."""

    accelerator: str | None  # the chip, as the catalog names it across clouds ("A100-40GB"), None: CPU only
    accelerator_count: int
    vcpus: int
    memory_gb: float

    def unpriced(self, cloud: str, machine_type: str) -> MachineInfo:
        """This machine as the catalog's record of one that is in no price list (a backend's own machines,
        a cluster's node): no GPU model the catalog knows, no price."""
        return MachineInfo(
            cloud=cloud,
            machine_type=machine_type,
            vcpus=self.vcpus,
            memory_gb=self.memory_gb,
            accelerator=self.accelerator,
            accelerator_count=self.accelerator_count,
            gpu=None,
            price_per_hour=None,
            price_region="",
            price_date="",
        )


class JobHandle(Protocol):
    job_id: str

    @property
    def backend_name(self) -> str: ...  # the registry name, for the reattach hint
    @property
    def location(
        self,
    ) -> Mapping[str, str]:  # what ``attach`` needs besides the id: {"project": …, "region": …}, {} locally
        ...
    @property
    def stops_gracefully(self) -> bool: ...  # cancel asks replicas to checkpoint first; ``kill`` stops them at once

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

    def files(self) -> JobFiles:
        """Where the job's outputs and TensorBoard event files are, as folders that list and read
        (``cloudtrain outputs``, ``cloudtrain tensorboard``)."""
        ...


class HandleDefaults:
    """Neutral defaults for the optional members of :class:`JobHandle`."""

    backend_name: ClassVar[str] = ""
    stops_gracefully: ClassVar[bool] = False

    @property
    def location(self) -> Mapping[str, str]:
        return {}

    def kill(self: JobHandle) -> JobStatus:  # a mixin: the handle class defines cancel
        return self.cancel()

    def model_outputs_warning(self, status: JobStatus) -> str | None:
        return None

    def files(self) -> JobFiles:
        raise UsageError(
            f"job {getattr(self, 'job_id', '?')}: its backend does not say where its outputs are",
            hint="look in the job's output folder",
        )


class Backend(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...  # the engine's name in messages ("Vertex AI", "SageMaker")
    @property
    def section(
        self,
    ) -> str | None: ...  # the YAML section of its own keys (``<name>:``); None: top-level keys (vertex, sagemaker)
    @property
    def required_keys(self) -> tuple[str, ...]: ...  # top-level config keys a job on it needs
    @property
    def location_keys(self) -> tuple[str, ...]: ...  # what attach / list_jobs / history need to find a job
    @property
    def storage_schemes(
        self,
    ) -> tuple[str, ...]: ...  # URI schemes its machines read and write ("gs", "s3"); () local paths only
    @property
    def max_runtime_seconds(self) -> int | None: ...  # the longest job it accepts
    @property
    def job_name_limit(self) -> int | None: ...  # the longest job name it accepts
    @property
    def billed(self) -> bool: ...  # a job costs the catalog's prices (False: this machine)
    @property
    def runs_tpus(self) -> bool: ...  # a TPU machine runs the TPU image
    @property
    def writes_buckets(self) -> bool: ...  # its jobs write to bucket URIs
    @property
    def image_region(self) -> str | None: ...  # the region whose image rules apply; None: the config's
    @property
    def local_data(self) -> str | None: ...  # how a local-folder data channel reaches the job; None: uploaded
    @property
    def bucket_data(self) -> str: ...  # how a bucket data channel reaches the job
    @property
    def follows_target(self) -> bool: ...  # runs under another backend's contract (the config's ``target``)
    @property
    def contract(self) -> str | None: ...  # whose catalog and contract its jobs follow; None: its own
    @property
    def runs_here(self) -> bool: ...  # its jobs run on this machine, as the user (a run, not a cloud job)
    @property
    def managed_tensorboard(self) -> bool: ...  # it puts a managed TensorBoard in the request (``tensorboard:``)
    @property
    def sweeps_here(self) -> bool: ...  # it runs a sweep itself, one Optuna study here (False: the cloud tunes)
    @property
    def secret_kind(self) -> str | None: ...  # the secret references (gcp, aws) its jobs read; None: none

    def fill_document(self, data: dict[str, Any]) -> list[tuple[tuple[str, ...], str, str]]: ...

    @property
    def staging_required(self) -> bool: ...  # stages packages and outputs in a bucket
    @property
    def runs_containers(self) -> bool: ...  # runs the config's own ``container:``
    @property
    def spot_max_wait(self) -> bool: ...  # its spot capacity takes ``spot.max_wait``
    @property
    def flex_start(self) -> bool: ...  # it has a flex-start strategy
    @property
    def max_channels(self) -> int | None: ...  # the most ``data:`` channels a job may have
    @property
    def channel_options(self) -> tuple[str, ...]: ...  # ``data:`` mapping keys it takes
    @property
    def script_args(self) -> bool: ...  # a script job takes the config's ``args``
    @property
    def machine_word(self) -> str: ...  # what it calls ``machine.type``
    @property
    def submit_needs(self) -> str: ...  # the keys a config moved to it must add
    @property
    def image_registry(self) -> re.Pattern[str] | None: ...  # image URIs in its own registry
    @property
    def tf_image(self) -> re.Pattern[str] | None: ...  # its TensorFlow training images (groups: major, minor)
    @property
    def spot_basis(self) -> str: ...  # what a spot job's catalog $/hour stands for
    @property
    def model_dir_words(self) -> str: ...  # where its contract keeps the model

    def spec_warnings(self, spec: JobSpec) -> list[str]: ...

    def cost_after(self, status: JobStatus) -> dict[str, Any] | None: ...

    def states_now(self, job_ids: list[str], *, region: str | None, project: str | None) -> dict[str, str]: ...

    @property
    def list_columns(self) -> tuple[str, ...]: ...  # ``details`` keys ``list --backend`` shows as columns
    @property
    def machine_keys(self) -> tuple[str, ...]: ...  # ``machine:`` keys only some backends take

    def settings_checks(self, loaded: Any) -> list[tuple[tuple[str, ...], Callable[[], None]]]: ...

    def field_checks(self, loaded: Any) -> list[tuple[tuple[str, ...], Any]]: ...

    def contract_checks(self, loaded: Any) -> list[tuple[tuple[str, ...], Callable[[], None]]]: ...

    def check_container(self, loaded: Any) -> None: ...

    def check_sweep(self, loaded: Any, params: list[Any]) -> None: ...

    def job_settings(self, config: Any) -> BackendSettings:
        """Its typed record of what only it reads of a config (``JobSpec.backend_settings``)."""
        ...

    def resolve_machine(self, config: Any) -> MachineInfo:
        """The config's ``machine:`` resolved (type, GPUs, price)."""
        ...

    def display_name(self, config: Any, run_id: str) -> str: ...

    def default_output_dir(self, config: Any, run_id: str) -> str: ...

    def project(self, loaded: Any) -> tuple[str | None, str | None]: ...

    @property
    def local_contract(
        self,
    ) -> EnvironmentContract | None: ...  # what its machines show a job, for ``--local``; None: not followed

    def bucket_store(self, spec: JobSpec, bucket: str) -> GcsStore | S3Store:
        """A store on ``bucket`` of its own scheme, with the credentials its jobs use: how a run on a machine
        cloudtrain reaches itself (``--local``, a Slurm cluster) reads a data channel there."""
        ...

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

    def render(self, spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
        """The exact request ``submit`` would send, as JSON-ready data. Pure: no I/O."""
        ...

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> JobHandle: ...  # None: a container job

    def submit_detached(self, spec: JobSpec, package: BuiltPackage | None) -> JobHandle:
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
    #: ``machine:`` keys only some backends take that it takes (Slurm: ``accelerator_type``, its gres GPU type)
    machine_keys: ClassVar[tuple[str, ...]] = ()
    #: ``details`` keys of its ``list_jobs`` statuses that ``list --backend`` shows as columns (Slurm: the cluster …)
    list_columns: ClassVar[tuple[str, ...]] = ()
    max_runtime_seconds: ClassVar[int | None] = None
    job_name_limit: ClassVar[int | None] = None
    job_id_pattern: ClassVar[re.Pattern[str] | None] = None  # named groups: ``id`` and the location keys
    billed: ClassVar[bool] = True  # a job costs the catalog's prices here (False: this machine)
    runs_tpus: ClassVar[bool] = False  # a TPU machine runs the TPU image (False: the CPU/GPU image, or none)
    writes_buckets: ClassVar[bool] = True  # its jobs write to bucket URIs (False: to local folders only)
    image_region: ClassVar[str | None] = None  # the region whose image rules apply; None: the config's region
    #: How a local-folder data channel reaches the job, for the summary; None: uploaded to the staging bucket
    local_data: ClassVar[str | None] = None
    bucket_data: ClassVar[str] = "read in place"  # how a bucket data channel reaches the job
    follows_target: ClassVar[bool] = False  # runs under another backend's contract, the config's ``target``
    #: Whose catalog and environment contract its jobs follow (a backend name); None: its own.
    #: With ``follows_target``, the config's ``target`` comes first.
    contract: ClassVar[str | None] = None
    #: Its jobs run on this machine, as the user: a run (not a cloud job) that reads every secret
    #: reference with the user's credentials, has no region, project or bill, and stops on Ctrl-C
    runs_here: ClassVar[bool] = False
    #: It puts a managed TensorBoard in the request (the config's ``tensorboard:``; False: its runs are
    #: served by ``cloudtrain tensorboard`` alone, and the key is refused)
    managed_tensorboard: ClassVar[bool] = False
    #: It runs a sweep's trials itself, as one Optuna study on this machine (False: the cloud's tuning job)
    sweeps_here: ClassVar[bool] = False
    #: The kind of secret reference (:mod:`cloudtrain.secrets.refs`: ``gcp``, ``aws``) its jobs' launcher
    #: reads on the training machine with the job's own identity; None: none (unless ``runs_here``)
    secret_kind: ClassVar[str | None] = None
    staging_required: ClassVar[bool] = False  # stages packages and outputs in a bucket of ``storage_schemes``
    runs_containers: ClassVar[bool] = True  # runs the config's own ``container:``
    spot_max_wait: ClassVar[bool] = False  # its spot capacity takes a wait limit (``spot.max_wait``)
    flex_start: ClassVar[bool] = False  # it has a flex-start scheduling strategy (``flex_start:``)
    max_channels: ClassVar[int | None] = None  # the most ``data:`` channels a job may have
    channel_options: ClassVar[tuple[str, ...]] = ()  # ``data:`` mapping keys it takes (``input_mode``)
    script_args: ClassVar[bool] = (
        True  # a ``package.script`` job takes the config's ``args`` (not only hyperparameters)
    )
    machine_word: ClassVar[str] = "machine type"  # what it calls ``machine.type`` ("instance type")
    submit_needs: ClassVar[str] = ""  # the keys a config moved to it must add ("project and a gs:// staging_bucket")
    image_registry: ClassVar[re.Pattern[str] | None] = None  # image URIs in its own registry
    tf_image: ClassVar[re.Pattern[str] | None] = None  # its TensorFlow training images; groups: major, minor
    #: What a spot job's catalog $/hour stands for here (the catalog holds on-demand list prices only)
    spot_basis: ClassVar[str] = "on-demand list price; spot bills less"
    model_dir_words: ClassVar[str] = "AIP_MODEL_DIR"  # where its contract keeps the model, for the empty-model warning
    #: Its machines by ``machine.type``, for a backend whose machines are in no catalog table: the neutral
    #: ``describe``, ``nearest``, machine check and ``resolve_machine`` read them. Empty: the catalog's.
    machines: ClassVar[Mapping[str, Hardware]] = {}
    #: Its record of the spec's ``backend_settings``; one with a ``section`` field gets the config's section.
    settings_record: ClassVar[type[BackendSettings]] = BackendSettings

    def spec_warnings(self, spec: JobSpec) -> list[str]:
        """Warnings about a resolved job that follows its contract (one line each; none by default)."""
        return []

    def cost_after(self, status: JobStatus) -> dict[str, Any] | None:
        """What a finished job cost, from its billing record × the catalog's price; None: not its record."""
        return None

    def states_now(self, job_ids: list[str], *, region: str | None, project: str | None) -> dict[str, str]:
        """The current state (a JobState value) of those of ``job_ids`` it can read in one call, for
        ``list``; {} by default (history's last seen state is shown)."""
        return {}

    def job_settings(self, config: Any) -> BackendSettings:
        """The spec's ``backend_settings``: what only this backend reads of a validated config."""
        settings: dict[str, Any] = {"job_dir": config.job_dir.rstrip("/") if config.job_dir else None}
        if self.section and "section" in {f.name for f in fields(self.settings_record)}:
            settings["section"] = config.section(self.section)
        return self.settings_record(**settings)

    def resolve_machine(self, config: Any) -> MachineInfo:
        """The config's ``machine:`` as the catalog of its cloud describes it (type, GPUs, price), or as
        :attr:`machines` does (no price: not in the catalog)."""
        m = config.machine
        own = self.machines.get(m.type)
        if own is None:
            return catalog.resolve_machine(config.cloud, m.type, m.accelerator, m.accelerator_count)
        return own.unpriced(self.name, m.type)  # type: ignore[attr-defined]  # a mixin: the backend names itself

    def display_name(self, config: Any, run_id: str) -> str:
        """The job's name: the per-submit ``run_id`` (a backend may keep the config's name as given)."""
        return run_id

    def default_output_dir(self, config: Any, run_id: str) -> str:
        """Where a job writes when the config names no folder: one folder per submit, in the staging bucket."""
        if not config.staging_bucket:
            raise UsageError(
                f"job {config.name}: no folder for its outputs", hint="set output_dir: (or staging_bucket:)"
            )
        return f"{config.staging_bucket.rstrip('/')}/cloudtrain/outputs/{run_id}"

    def project(self, loaded: Any) -> tuple[str | None, str | None]:
        """``(project, where it came from)``: the location key beside the region (None: none needed).
        A backend that takes no project (SageMaker) has none, even when a config moved to it with
        ``--set backend=`` still names one; a local run keeps it (its target's data may need it)."""
        if "project" not in self.required_keys and not self.follows_target:
            return None, None
        return loaded.config.project, loaded.project_source

    def fill_document(self, data: dict[str, Any]) -> list[tuple[tuple[str, ...], str, str]]:
        """Before validation: fill in the keys every backend's schema requires that this one decides
        itself; one ``(path, message, hint)`` per key written that it does not take."""
        return []

    def settings_checks(self, loaded: Any) -> list[tuple[tuple[str, ...], Callable[[], None]]]:
        """Checks of the keys only this backend reads, when it runs the job: ``(fields, check)`` pairs
        for the config checker (a check raises ``loaded.error(...)``)."""
        return []

    def contract_checks(self, loaded: Any) -> list[tuple[tuple[str, ...], Callable[[], None]]]:
        """Checks that hold wherever a job follows this backend's contract (``--local`` with its ``target`` too)."""
        return []

    def check_container(self, loaded: Any) -> None:
        """Refuse a ``container:`` image this backend cannot pull (``loaded.error``)."""

    def check_sweep(self, loaded: Any, params: list[Any]) -> None:
        """Refuse a sweep beyond this backend's tuning limits (``loaded.error``)."""

    local_contract: ClassVar[EnvironmentContract | None] = None

    def bucket_store(self, spec: JobSpec, bucket: str) -> GcsStore | S3Store:
        raise UsageError(f"{self.title} has no buckets of its own to read {bucket!r} from")

    def field_checks(self, loaded: Any) -> list[tuple[tuple[str, ...], Any]]:
        """Checks of the location and machine keys for a backend that has no catalog of regions and
        machines (a cluster): ``(fields, check)`` pairs for the config checker; empty: the catalog's checks.
        With :attr:`machines`: ``machine.type`` names one of them."""
        if not self.machines:
            return []

        def machine() -> None:
            kind = loaded.config.machine.type
            if kind not in self.machines:
                raise loaded.error(
                    ("machine", "type"), f"no {self.title} machine {kind!r}", f"use {', '.join(self.machines)}"
                )

        return [(("machine",), machine)]

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
        return self.machines.get(str(machine.get("type")))

    def nearest(self, hardware: Hardware) -> list[dict[str, Any]]:
        """Of :attr:`machines`, those with (or without) an accelerator as ``hardware``, nearest in vCPUs first."""
        fits = [
            name for name, own in self.machines.items() if (own.accelerator is None) == (hardware.accelerator is None)
        ]
        return [
            {"type": name} for name in sorted(fits, key=lambda name: abs(self.machines[name].vcpus - hardware.vcpus))
        ]

    def label(self, replica: str) -> str:
        return replica

    def translate(self, loaded: Any) -> tuple[dict[str, Any], list[str]] | None:
        return None

    def submit_detached(self, spec: JobSpec, package: BuiltPackage | None) -> Any:  # Any: each backend's own handle
        """A cloud's job runs on without its submitter: the same as ``submit``."""
        return self.submit(spec, package)  # type: ignore[attr-defined]  # a mixin: the backend defines submit

    def attach_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> Any:
        raise UsageError(
            f"backend {getattr(self, 'name', '?')!r} has no sweeps", hint="run the sweep on another backend"
        )


class CatalogMachines:
    """``describe`` / ``nearest`` for a backend whose machines are in ``cloudtrain/catalog`` under its name."""

    name: str

    def describe(self, machine: Mapping[str, Any]) -> Hardware | None:
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
        found = nearest_machine(
            self.name, hardware.accelerator, hardware.accelerator_count, hardware.vcpus, hardware.memory_gb
        )
        return [self.machine_of(found)]

    def machine_of(self, info: Any) -> dict[str, Any]:
        """A catalog machine as the ``machine:`` mapping this backend's configs write."""
        return {"type": info.machine_type}


def poll_until_terminal(status: Callable[[], JobStatus], sleep: Callable[[float], None], seconds: float) -> JobStatus:
    """Call ``status()`` every ``seconds`` until the job has ended; its last status."""
    while not (current := status()).state.terminal:
        sleep(seconds)
    return current
