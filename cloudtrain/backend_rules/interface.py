"""What the config needs to know of a backend before any job exists: its facts, capabilities and name rules.

:class:`BackendRules` is the ground floor of the backend interface: the config's schema and checks, the
data schemes, the secrets checks and history read it through :func:`cloudtrain.backend_rules.interface`, and
it names no config, spec or runtime type. The checks that take a loaded config are
:class:`cloudtrain.config.rules.ConfigRules` (config time), those that build a spec
:class:`cloudtrain.spec.SpecRules` (spec time); submitting and watching a job is
:class:`cloudtrain.backends.base.Backend`. :class:`RuleDefaults` gives each fact a neutral default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from cloudtrain.backend_rules.capabilities import DEFAULT_CAPABILITIES, Capabilities, Capability
from cloudtrain.catalog.records import MachineInfo

__all__ = ["BackendRules", "BackendSettings", "Capabilities", "Capability", "Hardware", "RuleDefaults"]


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


@dataclass(frozen=True)
class BackendSettings:
    """What one backend alone reads of a job: the base of each backend's own frozen record
    (``cloudtrain/backends/<name>/``), reached as ``JobSpec.backend_settings``. This neutral
    record is what a backend with no settings of its own gets (``local``)."""

    #: The job dir as given (ML Engine's), where a backend takes one: also the output dir, and where
    #: packages and data are staged without ``staging_bucket``. None: the backend has none.
    job_dir: str | None = None

    def summary_rows(self) -> tuple[tuple[str, str | None], ...]:
        """Rows the dry run's summary adds for these settings (``(label, None)`` rows are left out)."""
        return ()


class BackendRules(Protocol):
    """A backend's facts, capabilities and name rules: what validating a config needs of it."""

    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...  # the engine's name in messages ("Vertex AI", "SageMaker")
    @property
    def section(self) -> str | None: ...  # the YAML section of its own keys (``<name>:``); None: top-level keys
    @property
    def required_keys(self) -> tuple[str, ...]: ...  # top-level config keys a job on it needs
    @property
    def location_keys(self) -> tuple[str, ...]: ...  # what attach / list_jobs / history need to find a job
    @property
    def storage_schemes(self) -> tuple[str, ...]: ...  # URI schemes its machines read and write; () local only
    @property
    def machine_keys(self) -> tuple[str, ...]: ...  # ``machine:`` keys only some backends take
    @property
    def max_runtime_seconds(self) -> int | None: ...  # the longest job it accepts
    @property
    def job_name_limit(self) -> int | None: ...  # the longest job name it accepts
    @property
    def capabilities(self) -> Capabilities: ...  # what it can do, and why not the rest
    @property
    def image_region(self) -> str | None: ...  # the region whose image rules apply; None: the config's
    @property
    def local_data(self) -> str | None: ...  # how a local-folder data channel reaches the job; None: uploaded
    @property
    def bucket_data(self) -> str: ...  # how a bucket data channel reaches the job
    @property
    def contract(self) -> str | None: ...  # whose catalog and contract its jobs follow; None: its own
    @property
    def secret_kind(self) -> str | None: ...  # the secret references (gcp, aws) its jobs read; None: none
    @property
    def max_channels(self) -> int | None: ...  # the most ``data:`` channels a job may have
    @property
    def channel_options(self) -> tuple[str, ...]: ...  # ``data:`` mapping keys it takes
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
    @property
    def machines(self) -> Mapping[str, Hardware]: ...  # its own machines, where no catalog table has them

    def fill_document(self, data: dict[str, Any]) -> list[tuple[tuple[str, ...], str, str]]:
        """Before validation: fill in the keys every backend's schema requires that this one decides
        itself; one ``(path, message, hint)`` per key written that it does not take."""
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


class RuleDefaults:
    """Neutral defaults for :class:`BackendRules`; a backend class inherits them (through
    :class:`cloudtrain.backends.base.BackendFacts`) and overrides what differs."""

    title: ClassVar[str] = ""  # the engine's name in messages ("Vertex AI")
    section: ClassVar[str | None] = None
    required_keys: ClassVar[tuple[str, ...]] = ()
    location_keys: ClassVar[tuple[str, ...]] = ()
    storage_schemes: ClassVar[tuple[str, ...]] = ()
    #: ``machine:`` keys only some backends take that it takes (Slurm: ``accelerator_type``, its gres GPU type)
    machine_keys: ClassVar[tuple[str, ...]] = ()
    max_runtime_seconds: ClassVar[int | None] = None
    job_name_limit: ClassVar[int | None] = None
    job_id_pattern: ClassVar[re.Pattern[str] | None] = None  # named groups: ``id`` and the location keys
    #: What it can do (:class:`Capability`) and its reason for each thing it cannot, where it gives one
    capabilities: ClassVar[Capabilities] = DEFAULT_CAPABILITIES
    image_region: ClassVar[str | None] = None  # the region whose image rules apply; None: the config's region
    #: How a local-folder data channel reaches the job, for the summary; None: uploaded to the staging bucket
    local_data: ClassVar[str | None] = None
    bucket_data: ClassVar[str] = "read in place"  # how a bucket data channel reaches the job
    #: Whose catalog and environment contract its jobs follow (a backend name); None: its own.
    #: With ``Capability.FOLLOWS_TARGET``, the config's ``target`` comes first.
    contract: ClassVar[str | None] = None
    #: The kind of secret reference (:mod:`cloudtrain.secrets.refs`: ``gcp``, ``aws``) its jobs' launcher
    #: reads on the training machine with the job's own identity; None: none (unless ``Capability.RUNS_HERE``)
    secret_kind: ClassVar[str | None] = None
    max_channels: ClassVar[int | None] = None  # the most ``data:`` channels a job may have
    channel_options: ClassVar[tuple[str, ...]] = ()  # ``data:`` mapping keys it takes (``input_mode``)
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

    def fill_document(self, data: dict[str, Any]) -> list[tuple[tuple[str, ...], str, str]]:
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
