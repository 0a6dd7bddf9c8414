"""The one interface every backend implements: its runtime part (submit, attach, follow, cancel).

A backend is one folder exposing ``BACKEND`` (a :class:`Backend`), registered by one line in
:mod:`cloudtrain.backend_rules`. The interface is cut by when each part is needed, each on the floor of the types it
takes: :class:`~cloudtrain.backend_rules.interface.BackendRules`, :class:`~cloudtrain.config.rules.ConfigRules`,
:class:`~cloudtrain.spec.SpecRules`, then here :class:`Submits` and :class:`Watches`. A backend imports its cloud SDK
only inside the methods that talk to the cloud, so ``--help`` and ``--dry-run`` never pay for it.
:class:`BackendFacts` and :class:`HandleDefaults` default every member, so a backend states only what differs. See
docs/how-to/add-a-backend.md."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from cloudtrain import catalog
from cloudtrain.backend_rules.capabilities import Capability
from cloudtrain.backend_rules.interface import BackendSettings as BackendSettings
from cloudtrain.backend_rules.interface import Facts as Facts
from cloudtrain.backend_rules.interface import Hardware as Hardware
from cloudtrain.backend_rules.interface import RuleDefaults
from cloudtrain.backend_rules.interface import Words as Words
from cloudtrain.catalog.cost import Cost
from cloudtrain.catalog.crosscloud import nearest_machine
from cloudtrain.catalog.records import MachineInfo
from cloudtrain.catalog.table import table
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.rules import Check
from cloudtrain.config.schema import JobConfig
from cloudtrain.config.yaml12 import LoadedYaml
from cloudtrain.errors import UsageError
from cloudtrain.job_states import JobState as JobState
from cloudtrain.job_states import JobStatus as JobStatus
from cloudtrain.job_states import LogLine as LogLine
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec, SpecRules

if TYPE_CHECKING:
    from cloudtrain.backends.environment import EnvironmentContract
    from cloudtrain.backends.files import JobFiles
    from cloudtrain.data.stores import GcsStore, S3Store
    from cloudtrain.sweeps.results import SweepResults  # a sweep's table: not on a job's dry run


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


class SweepHandle(JobHandle, Protocol):
    """A cloud tuning job: a job whose trials' results it reads."""

    def results(self) -> SweepResults: ...


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


class Submits(Protocol):
    """Submit time: the request a spec becomes, and the job it starts."""

    @property
    def local_contract(self) -> EnvironmentContract | None: ...  # what its machines show a job, for ``--local``

    def spec_warnings(self, spec: JobSpec) -> list[str]: ...

    def render(self, spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
        """The exact request ``submit`` would send, as JSON-ready data. Pure: no I/O."""
        ...

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> JobHandle:
        """The job started (None: a container job); with ``sweep:``, the cloud's tuning job, a :class:`SweepHandle`."""
        ...

    def submit_detached(self, spec: JobSpec, package: BuiltPackage | None) -> JobHandle:
        """``submit --detach``: a job that keeps running after this process returns."""
        ...

    def bucket_store(self, spec: JobSpec, bucket: str) -> GcsStore | S3Store:
        """A store on ``bucket`` of its own scheme, with the credentials its jobs use: how a run on a machine
        cloudtrain reaches itself (``--local``, a Slurm cluster) reads a data channel there."""
        ...


class Watches(Protocol):
    """Watch time: finding a job again, its state, its lines and what it cost."""

    def attach(self, job_id: str, *, region: str | None = None, project: str | None = None) -> JobHandle:
        """A handle on an existing job; only the ``location_keys`` it declares are required."""
        ...

    def attach_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> SweepHandle:
        """A handle on an existing sweep (tuning job)."""
        ...

    def list_jobs(
        self, *, region: str | None = None, project: str | None = None, limit: int = 20
    ) -> list[JobStatus]: ...

    def states_now(self, job_ids: list[str], *, region: str | None, project: str | None) -> dict[str, str]: ...

    def cost_after(self, status: JobStatus) -> Cost | None: ...

    def label(self, replica: str) -> str:
        """How a replica's lines are labelled on the terminal."""
        ...


class Backend(SpecRules, Submits, Watches, Protocol):
    """A whole backend: its rules (config and spec time), then submitting and watching its jobs."""


class _Submitter(Protocol):
    """What :meth:`BackendFacts.submit_detached` needs of the backend it is mixed into."""

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> JobHandle: ...


def region_given(region: str | None, message: str) -> str:
    """``region``, or one line (``message``, hint: pass --region) from a backend that finds its jobs by region."""
    if region is None:
        raise UsageError(message, hint="pass --region")
    return region


class BackendFacts(RuleDefaults):
    """Neutral defaults for a backend's methods; a backend class inherits this, states its ``facts`` and
    ``words`` and overrides what differs."""

    local_contract: ClassVar[EnvironmentContract | None] = None

    def bucket_store(self, spec: JobSpec, bucket: str) -> GcsStore | S3Store:
        raise UsageError(f"{self.words.title} has no buckets of its own to read {bucket!r} from")

    def spec_warnings(self, spec: JobSpec) -> list[str]:
        """Warnings about a resolved job that follows its contract (one line each; none by default)."""
        return []

    def cost_after(self, status: JobStatus) -> Cost | None:
        """What a finished job cost, from its billing record × the catalog's price; None: not its record."""
        return None

    def states_now(self, job_ids: list[str], *, region: str | None, project: str | None) -> dict[str, str]:
        """The current state (a JobState value) of those of ``job_ids`` it can read in one call, for
        ``list``; {} by default (history's last seen state is shown)."""
        return {}

    def job_settings(self, config: JobConfig) -> BackendSettings:
        """The spec's ``backend_settings``: what only this backend reads of a validated config."""
        settings: dict[str, Any] = {"job_dir": config.job_dir.rstrip("/") if config.job_dir else None}
        record, section = self.facts.settings_record, self.facts.section
        if section and "section" in {f.name for f in fields(record)}:
            settings["section"] = config.section(section)
        return record(**settings)

    def resolve_machine(self, config: JobConfig) -> MachineInfo:
        """The config's ``machine:`` as the catalog of its cloud describes it (type, GPUs, price), or as
        the facts' ``machines`` do (no price: not in the catalog)."""
        m = config.machine
        own = self.facts.machines.get(m.type)
        if own is None:
            return catalog.resolve_machine(config.cloud, m.type, m.accelerator, m.accelerator_count)
        return own.unpriced(self.name, m.type)  # type: ignore[attr-defined]  # a mixin: the backend names itself

    def display_name(self, config: JobConfig, run_id: str) -> str:
        """The job's name: the per-submit ``run_id`` (a backend may keep the config's name as given)."""
        return run_id

    def default_output_dir(self, config: JobConfig, run_id: str) -> str:
        """Where a job writes when the config names no folder: one folder per submit, in the staging bucket."""
        if not config.staging_bucket:
            raise UsageError(
                f"job {config.name}: no folder for its outputs", hint="set output_dir: (or staging_bucket:)"
            )
        return f"{config.staging_bucket.rstrip('/')}/cloudtrain/outputs/{run_id}"

    def project(self, loaded: LoadedConfig) -> tuple[str | None, str | None]:
        """``(project, where it came from)``: the location key beside the region (None: none needed).
        A backend that takes no project (SageMaker) has none, even when a config moved to it with
        ``--set backend=`` still names one; a local run keeps it (its target's data may need it)."""
        if "project" not in self.facts.required_keys and Capability.FOLLOWS_TARGET not in self.facts.capabilities:
            return None, None
        return loaded.config.project, loaded.project_source

    def config_checks(self, loaded: LoadedConfig) -> list[Check]:
        """Checks of the keys only this backend reads, when it runs the job (with ``Capability.CLUSTER``,
        its location and machine keys too): ``(fields, check)`` pairs; with the facts' ``machines``,
        ``machine.type`` names one of them."""
        if not self.facts.machines:
            return []

        def machine() -> None:
            kind = loaded.config.machine.type
            if kind not in self.facts.machines:
                raise loaded.error(
                    ("machine", "type"),
                    f"no {self.words.title} machine {kind!r}",
                    f"use {', '.join(self.facts.machines)}",
                )

        return [(("machine",), machine)]

    def contract_checks(self, loaded: LoadedConfig) -> list[Check]:
        """Checks that hold wherever a job follows this backend's contract (``--local`` with its ``target`` too)."""
        return []

    def label(self, replica: str) -> str:
        return replica

    def translate(self, loaded: LoadedYaml) -> tuple[dict[str, Any], list[str]] | None:
        return None

    def submit_detached(self: _Submitter, spec: JobSpec, package: BuiltPackage | None) -> JobHandle:
        """A cloud's job runs on without its submitter: the same as ``submit``."""
        return self.submit(spec, package)  # a mixin: the backend defines submit

    def attach_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> SweepHandle:
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
