"""What the config needs to know of a backend before any job exists: its facts, capabilities and name rules.
:class:`BackendRules` names no config, spec or runtime type (those are ``ConfigRules``, ``SpecRules``, ``Backend``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from cloudtrain.backend_rules.capabilities import DEFAULT_CAPABILITIES
from cloudtrain.backend_rules.capabilities import Capabilities as Capabilities
from cloudtrain.backend_rules.capabilities import Capability as Capability
from cloudtrain.catalog.records import MachineInfo


@dataclass(frozen=True)
class Hardware:
    """A machine described without naming its cloud, for cross-cloud mapping."""

    accelerator: str | None  # the chip, as the catalog names it across clouds ("A100-40GB"), None: CPU only
    accelerator_count: int
    vcpus: int
    memory_gb: float

    def unpriced(self, cloud: str, machine_type: str) -> MachineInfo:
        """This machine as a catalog record in no price list (a cluster's node): no known GPU model, no price."""
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
    """The base of each backend's own settings record (``JobSpec.backend_settings``), and the one of none."""

    #: The job dir as given (ML Engine's): also the output dir and staging place without ``staging_bucket``.
    job_dir: str | None = None

    def summary_rows(self) -> tuple[tuple[str, str | None], ...]:
        """Rows the dry run's summary adds for these settings (``(label, None)`` rows are left out)."""
        return ()


@dataclass(frozen=True)
class Facts:
    """What a backend is, as one frozen record: ``BACKEND.facts``. Every field has a neutral default."""

    section: str | None = None  # the YAML section of its own keys (``<name>:``); None: top-level keys
    required_keys: tuple[str, ...] = ()  # top-level config keys a job on it needs
    location_keys: tuple[str, ...] = ()  # what attach / list_jobs / history need to find a job
    storage_schemes: tuple[str, ...] = ()  # URI schemes its machines read and write; () local only
    #: ``machine:`` keys only some backends take that it takes (Slurm: ``accelerator_type``, its gres GPU type)
    machine_keys: tuple[str, ...] = ()
    max_runtime_seconds: int | None = None  # the longest job it accepts
    job_name_limit: int | None = None  # the longest job name it accepts
    job_id_pattern: re.Pattern[str] | None = None  # a full job name; named groups ``id`` and the location keys
    #: What it can do (:class:`Capability`) and its reason for each thing it cannot, where it gives one
    capabilities: Capabilities = DEFAULT_CAPABILITIES
    image_region: str | None = None  # the region whose image rules apply; None: the config's region
    #: Whose catalog and contract its jobs follow (None: its own); with ``FOLLOWS_TARGET``, ``target`` first.
    contract: str | None = None
    #: The secret reference kind its launcher reads with the job's identity (``gcp``, ``aws``); None: none
    secret_kind: str | None = None
    max_channels: int | None = None  # the most ``data:`` channels a job may have
    channel_options: tuple[str, ...] = ()  # ``data:`` mapping keys it takes (``input_mode``)
    #: Image URIs in its own registry; without ``Capability.ANY_REGISTRY``, the only ``container:`` it runs
    image_registry: re.Pattern[str] | None = None
    tf_image: re.Pattern[str] | None = None  # its TensorFlow training images; groups: major, minor
    #: Its machines by ``machine.type``, for a backend in no catalog table; empty: the catalog's.
    machines: Mapping[str, Hardware] = field(default_factory=dict)
    #: ``details`` keys of its ``list_jobs`` statuses that ``list --backend`` shows as columns (Slurm: the cluster …)
    list_columns: tuple[str, ...] = ()
    #: Its record of the spec's ``backend_settings``; one with a ``section`` field gets the config's section.
    settings_record: type[BackendSettings] = BackendSettings
    max_parallel_trials: int | None = None  # a sweep's most trials at once
    max_categorical_values: int | None = None  # a sweep's most values per categorical parameter


@dataclass(frozen=True)
class Words:
    """What a backend's messages call its things: ``BACKEND.words``."""

    title: str = ""  # the engine's name in messages ("Vertex AI", "SageMaker")
    machine_word: str = "machine type"  # what it calls ``machine.type`` ("instance type")
    submit_needs: str = ""  # the keys a config moved to it must add ("project and a gs:// staging_bucket")
    #: What a spot job's catalog $/hour stands for here (the catalog holds on-demand list prices only)
    spot_basis: str = "on-demand list price; spot bills less"
    model_dir_words: str = "AIP_MODEL_DIR"  # where its contract keeps the model, for the empty-model warning
    #: How a local-folder data channel reaches the job, for the summary; None: uploaded to the staging bucket
    local_data: str | None = None
    bucket_data: str = "read in place"  # how a bucket data channel reaches the job


class BackendRules(Protocol):
    """A backend's facts, words and name rules: what validating a config needs of it."""

    @property
    def name(self) -> str: ...
    @property
    def facts(self) -> Facts: ...
    @property
    def words(self) -> Words: ...

    def fill_document(self, data: dict[str, Any]) -> list[tuple[tuple[str, ...], str, str]]:
        """Before validation: fill the required keys this backend decides; ``(path, message, hint)`` per one refused."""
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
    """Neutral defaults for :class:`BackendRules`' methods, inherited by backends with their ``facts``, ``words``."""

    facts: ClassVar[Facts] = Facts()
    words: ClassVar[Words] = Words()

    def fill_document(self, data: dict[str, Any]) -> list[tuple[tuple[str, ...], str, str]]:
        return []

    def job_name(self, name: str, tail: str) -> str:
        """``name`` + ``tail`` (the per-submit stamp), ``name`` cut so the whole fits ``job_name_limit``."""
        if self.facts.job_name_limit is not None:
            name = name[: self.facts.job_name_limit - len(tail)].rstrip("-_")
        return name + tail

    def parse_job_id(self, text: str) -> tuple[str, dict[str, str]] | None:
        pattern = self.facts.job_id_pattern
        match = pattern.match(text) if pattern else None
        if match is None:
            return None
        return match["id"], {k: match[k] for k in self.facts.location_keys if k in match.groupdict()}

    def describe(self, machine: Mapping[str, Any]) -> Hardware | None:
        return self.facts.machines.get(str(machine.get("type")))

    def nearest(self, hardware: Hardware) -> list[dict[str, Any]]:
        """Of the ``machines``, those with (or without) an accelerator as ``hardware``, nearest in vCPUs first."""
        own = self.facts.machines
        fits = [name for name, one in own.items() if (one.accelerator is None) == (hardware.accelerator is None)]
        return [{"type": name} for name in sorted(fits, key=lambda name: abs(own[name].vcpus - hardware.vcpus))]
