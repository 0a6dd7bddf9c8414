"""The backend-neutral job spec: a validated config with everything resolved; nothing here knows any cloud's API."""

from __future__ import annotations

import datetime as dt
import secrets
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, TypeVar, cast

from cloudtrain import backend_rules, catalog
from cloudtrain.backend_rules.capabilities import Capability
from cloudtrain.backend_rules.interface import BackendSettings as BackendSettings
from cloudtrain.catalog.records import MachineInfo
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.rules import ConfigRules
from cloudtrain.config.schema import JobConfig, Sweep
from cloudtrain.config.script_mode import parameter_server_notes, parameter_servers, script_cmd_args
from cloudtrain.data import schemes
from cloudtrain.errors import UsageError
from cloudtrain.secrets.masking import masked_repr, secret_values

#: The random end of every job name: 6 of [a-z0-9], so two submits in one second never share a name or folder.
SUFFIX_LENGTH = 6
_SUFFIX_ALPHABET = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class MachineSpec:
    type: str
    accelerator: str | None  # the cloud's own accelerator name (NVIDIA_TESLA_T4), None for CPU
    accelerator_count: int
    gpu_model: str | None  # "T4"
    disk_gb: int
    price_per_hour: float | None  # one replica, on-demand, in the catalog's reference region
    price_region: str
    price_date: str
    tpu_cores: int = 0  # a TPU VM: its TensorCores (accelerator/count are then Vertex's TPU fields)
    tpu_topology: str | None = None  # v5e: "2x2"; None for cloud-tpu (v2/v3) and GPUs

    @property
    def accelerators(self) -> str:
        """``4 × T4``, ``4 TPU cores (TPU_V5_LITEPOD, 2x2)``, ``CPU only``: what one replica computes on."""
        if self.tpu_cores:
            shape = f", {self.tpu_topology}" if self.tpu_topology else ""
            return f"{self.tpu_cores} TPU cores ({self.accelerator}{shape})"
        if not self.accelerator_count:
            return "CPU only"
        return f"{self.accelerator_count} × {self.gpu_model or self.accelerator or 'GPU'}"  # a cluster's: its gres type

    @property
    def replicas_per_machine(self) -> int:
        """What the trainer's strategy counts per machine: TPU cores, else GPUs, else 1."""
        return self.tpu_cores or max(self.accelerator_count, 1)


@dataclass(frozen=True)
class PackageSpec:
    path: Path  # absolute package directory
    module: str
    requirements: tuple[str, ...]
    name: str | None  # None: from the package's own metadata, else the folder name
    version: str | None  # None: from the package's own metadata, else 0.0.0
    script: str | None = None  # "train.py": a script job; ``path`` is then its source folder
    include: tuple[str, ...] = ()  # --include: credential-like files packaged all the same (with a warning)


@dataclass(frozen=True)
class ContainerSpec:
    """``container:``: the user's own image, run with ``command`` (empty: its entrypoint) + the job's args."""

    image_uri: str
    command: tuple[str, ...]


@dataclass(frozen=True)
class DataChannel:
    """One input channel. The code finds it at ``$SM_CHANNEL_<NAME>`` on every backend."""

    name: str
    source: str  # as configured: gs://…, s3://…, or an absolute local folder
    input_mode: str = "File"  # SageMaker: File | FastFile
    distribution: str = "FullyReplicated"  # SageMaker: FullyReplicated | ShardedByS3Key
    #: Where the cloud reads it: ``source`` for a bucket; a local folder's upload prefix once staged, None until then.
    uri: str | None = None
    manifest: Any = field(default=None, compare=False, repr=False)  # cloudtrain.data.manifest.Manifest

    @property
    def kind(self) -> str:
        """``gs``, ``s3`` or ``local``."""
        return schemes.source_kind(self.source) or "local"

    @property
    def env_name(self) -> str:
        return schemes.channel_env(self.name)

    @property
    def cloud_uri(self) -> str:
        """The bucket location a cloud job reads; a local folder must have been staged first."""
        if self.kind != "local":
            return self.source
        if self.uri is None:
            raise UsageError(f"data channel {self.name!r}: local folder {self.source} has not been staged for upload")
        return self.uri


@dataclass(frozen=True)
class ResumeSpec:
    """``submit --resume JOB``: the new job continues from that job's checkpoints."""

    job_id: str
    checkpoint_dir: str  # where JOB wrote its checkpoints (gs://, s3:// or a local path)
    output_dir: str | None = None  # JOB's base output directory (a Vertex job resumes by writing there again)


class SpecRules(ConfigRules, Protocol):
    """What building a :class:`JobSpec` needs of a backend (spec time), beside its config-time rules."""

    def job_settings(self, config: JobConfig) -> BackendSettings:
        """Its typed record of what only it reads of a config (``JobSpec.backend_settings``)."""
        ...

    def resolve_machine(self, config: JobConfig) -> MachineInfo:
        """The config's ``machine:`` resolved (type, GPUs, price)."""
        ...

    def display_name(self, config: JobConfig, run_id: str) -> str: ...

    def default_output_dir(self, config: JobConfig, run_id: str) -> str: ...


SettingsT = TypeVar("SettingsT", bound=BackendSettings)


def settings_of(spec: JobSpec, kind: type[SettingsT]) -> SettingsT:
    """``spec.backend_settings`` as ``kind``; a spec of another backend (``--local``) gets its defaults."""
    found = spec.backend_settings
    return found if isinstance(found, kind) else kind(job_dir=found.job_dir)


@dataclass(frozen=True, repr=False)  # its own __repr__ masks secrets: no generated one to compile
class JobSpec:
    name: str  # the config's name
    job_name: str  # name-YYYYMMDD-HHMMSS-xxxxxx (random suffix), unique per submit; Vertex name_suffix: false: the name
    backend: str  # a registered backend's name
    cloud: str  # whose catalog and env contract apply (a backend with a catalog)
    region: str
    #: The second location key beside the region: the cloud project or a cluster's workdir; None if not needed.
    project: str | None
    staging_bucket: str | None
    machine: MachineSpec
    replica_count: int
    package: PackageSpec
    args: tuple[str, ...]
    hyperparameters: Mapping[str, str | int | float | bool]
    image_uri: str
    tensorflow_version: str | None  # with image.uri: image.tensorflow as given (None when not)
    output_dir: str
    spot: bool
    max_wait_seconds: int | None
    max_runtime_seconds: int
    labels: Mapping[str, str]
    env: Mapping[str, str]
    config_file: Path
    created: dt.datetime = field(compare=False)
    channels: Mapping[str, DataChannel] = field(default_factory=lambda: MappingProxyType({}))
    sweep: Sweep | None = None  # a hyperparameter sweep of this job instead of one run
    project_source: str | None = None  # where ``project`` came from
    notes: tuple[str, ...] = ()  # one line per setting mapped to its nearest (see config.legacy / crosscloud)
    budget_usd: float | None = None  # budget.max_usd: max_runtime_seconds is already cut to fit it
    expected_hours: float | None = None  # budget.max_hours, for the estimate
    container: ContainerSpec | None = None  # the user's own container: no package is built or uploaded
    model_dir: bool = True  # script jobs: pass --model_dir (:func:`passes_model_dir`)
    resume: ResumeSpec | None = None  # submit --resume JOB
    #: Settings left to a default that changes what runs: the summary says "(default)" where they apply.
    defaults: tuple[str, ...] = ()
    #: ``secrets:``: name → reference; the request carries these, the machine's launcher reads the values
    secrets: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: ``tensorboard:``: a managed TensorBoard (a Vertex AI instance's name; True or an s3:// path on SageMaker)
    tensorboard: str | bool | None = None
    experiment: str | None = None  # ``experiment:``: the group of runs it belongs to

    def __repr__(self) -> str:  # the Python API's objects show secret values as *** (a notebook prints them)
        return masked_repr(self, secret_values(self.env, self.args, self.hyperparameters))

    @property
    def package_prefix(self) -> str | None:
        """Packages go to ``<staging_bucket>/cloudtrain/packages`` or gcloud's ``<job_dir>/packages``."""
        if self.staging_bucket:
            return f"{self.staging_bucket.rstrip('/')}/cloudtrain/packages"
        if self.job_dir:
            return f"{self.job_dir.rstrip('/')}/packages"
        return None

    @property
    def job_dir(self) -> str | None:
        """The job dir as given, where the backend takes one (:attr:`BackendSettings.job_dir`)."""
        return self.backend_settings.job_dir

    local_python: str | None = None  # --local: local.python (a path or "3.10"); None = find one
    local_layer: str = "image"  # --local: local.layer, "image" (what the cloud's image ships) or "slim"
    #: What only this job's backend reads (its typed record, e.g. the Vertex service account)
    backend_settings: BackendSettings = BackendSettings()
    budget_gpu_hours: float | None = None  # budget.max_gpu_hours: a cluster cuts its time limit to fit it
    image_python: str | None = None  # image.python: the image's Python where it comes in several
    parameter_server: bool = False  # distribution.parameter_server: SageMaker's sagemaker_parameter_server_enabled

    @property
    def gpus_total(self) -> int:
        return self.machine.accelerator_count * self.replica_count

    @property
    def cost_per_hour(self) -> float | None:
        price = self.machine.price_per_hour
        return None if price is None else price * self.replica_count

    @property
    def max_cost(self) -> float | None:
        """The cost cap: every replica running until max_runtime."""
        cost = self.cost_per_hour
        return None if cost is None else cost * self.max_runtime_seconds / 3600

    def module_args(self) -> tuple[str, ...]:
        """Args for ``python -m module``: the config's args, then hyperparameters as ``--key=value``."""
        return self.args + tuple(f"--{k}={_arg(v)}" for k, v in self.hyperparameters.items())

    def script_hyperparameters(self, model_dir: str) -> dict[str, str | int | float | bool]:
        """A script's hyperparameters plus ``model_dir`` (unless ``false``), as the SageMaker estimator adds it."""
        return {**self.hyperparameters, **({MODEL_DIR: model_dir} if self.model_dir else {})}

    def script_args(self, model_dir: str) -> tuple[str, ...]:
        """Args for ``python SCRIPT``: the config's args, then :meth:`script_hyperparameters` as the
        SageMaker training toolkit passes them (:func:`~cloudtrain.config.script_mode.script_cmd_args`)."""
        return self.args + tuple(script_cmd_args(self.script_hyperparameters(model_dir)))


MODEL_DIR = "model_dir"


def hyperparameters_as_written(
    values: Mapping[str, str | int | float | bool], numbers: Mapping[tuple[str | int, ...], str]
) -> dict[str, str | int | float | bool]:
    """Each hyperparameter as written (``version: 1.10`` reaches the job as ``--version=1.10``, not 1.1)."""
    out: dict[str, str | int | float | bool] = {}
    for key, value in values.items():
        text = numbers.get(("hyperparameters", key))
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        out[key] = text if numeric and text is not None and _arg(value) != text else value
    return out


def _arg(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def price_basis(spec: Any) -> str:
    """What a job's catalog $/hour stands for: ``on-demand list price``, and for a spot job what it bills
    instead (the backend's ``spot_basis``: the catalog holds on-demand list prices only)."""
    if getattr(spec, "spot", False):
        return backend_rules.rules(spec.backend).words.spot_basis
    return "on-demand list price"


def passes_model_dir(cfg: JobConfig) -> bool:
    """Whether a script gets ``--model_dir``: the config's ``model_dir``, else what its cloud's own SDK passes
    (SageMaker's estimator adds it; Vertex AI passes a script only its args), locally too; a module, never."""
    if cfg.model_dir is not None or not cfg.package.script:
        return bool(cfg.model_dir)
    return Capability.SCRIPT_MODEL_DIR in backend_rules.rules(cfg.cloud).facts.capabilities


def budget_runtime(cfg: JobConfig, price_per_hour: float | None) -> int:
    """``max_runtime``, cut so every replica's price × time stays under ``budget.max_usd`` (catalog-billed backends)."""
    if cfg.budget is None or cfg.budget.max_usd is None or price_per_hour is None:
        return cfg.max_runtime
    if Capability.BILLED not in backend_rules.rules(cfg.backend).facts.capabilities:
        return cfg.max_runtime
    affordable = int(cfg.budget.max_usd / (price_per_hour * cfg.replica_count) * 3600)
    return min(cfg.max_runtime, affordable)


def job_suffix() -> str:
    """A fresh random suffix: lowercase letters and digits, valid in every cloud's job names."""
    return "".join(secrets.choice(_SUFFIX_ALPHABET) for _ in range(SUFFIX_LENGTH))


def build_spec(loaded: LoadedConfig, *, now: dt.datetime | None = None, suffix: str | None = None) -> JobSpec:
    """Resolve a validated config: machine details, image, output dir, job name. What differs by backend, the backend
    says. The run id, ``NAME-YYYYMMDD-HHMMSS-SUFFIX`` under the backend's name rule, is unique per submit: the job name
    (unless the backend keeps it as given) and the output folder; ``suffix`` fixes it for tests."""
    cfg = loaded.config
    backend = cast(SpecRules, backend_rules.rules(cfg.backend))  # the registry's object, as building a spec sees it
    now = now or dt.datetime.now(dt.timezone.utc)
    run_id = backend.job_name(cfg.name, f"-{now:%Y%m%d-%H%M%S}-{suffix or job_suffix()}")
    info = backend.resolve_machine(cfg)
    image, tf_version = _image(cfg, backend, info)
    given_dir = cfg.output_dir or cfg.job_dir
    # as given: ML Engine users resume from it; else one folder per submit, even when the job's name is the same
    output_dir = given_dir.rstrip("/") if given_dir else backend.default_output_dir(cfg, run_id)
    project, project_source = backend.project(loaded)
    return JobSpec(
        name=cfg.name,
        job_name=backend.display_name(cfg, run_id),
        backend=cfg.backend,
        cloud=cfg.cloud,
        region=cfg.region,
        project=project,
        staging_bucket=cfg.staging_bucket.rstrip("/") if cfg.staging_bucket else None,
        machine=_machine(cfg, info),
        replica_count=cfg.replica_count,
        package=PackageSpec(
            path=(loaded.base_dir / cfg.package.path).resolve(),
            module=cfg.package.module,
            requirements=tuple(cfg.package.requirements),
            name=cfg.package.name,
            version=cfg.package.version,
            script=cfg.package.script,
        ),
        args=tuple(cfg.args) + _job_dir_args(cfg, Capability.WRITES_BUCKETS in backend.facts.capabilities),
        hyperparameters=MappingProxyType(hyperparameters_as_written(cfg.hyperparameters, loaded.source.numbers)),
        image_uri=image,
        tensorflow_version=tf_version,
        output_dir=output_dir,
        spot=cfg.spot.enabled,
        max_wait_seconds=cfg.spot.max_wait,
        max_runtime_seconds=budget_runtime(cfg, info.price_per_hour),
        backend_settings=backend.job_settings(cfg),
        budget_gpu_hours=cfg.budget.max_gpu_hours if cfg.budget else None,
        labels=MappingProxyType(dict(cfg.labels)),
        env=MappingProxyType(dict(cfg.env)),
        secrets=MappingProxyType(dict(cfg.secrets)),
        tensorboard=cfg.tensorboard,
        experiment=cfg.experiment,
        config_file=loaded.file,
        created=now,
        channels=MappingProxyType(build_channels(loaded)),
        sweep=cfg.sweep,
        project_source=project_source,
        notes=(*loaded.notes, *parameter_server_notes(cfg)),
        parameter_server=parameter_servers(cfg),
        budget_usd=cfg.budget.max_usd if cfg.budget else None,
        expected_hours=cfg.budget.max_hours if cfg.budget else None,
        model_dir=passes_model_dir(cfg),
        local_python=cfg.section(backend_rules.LOCAL).python,
        local_layer=cfg.section(backend_rules.LOCAL).layer,
        image_python=cfg.image.python,
        container=ContainerSpec(cfg.container.image_uri, tuple(cfg.container.command)) if cfg.container else None,
        defaults=(
            *(("max_runtime",) if "max_runtime" not in cfg.model_fields_set else ()),
            *(("image.tensorflow",) if tf_version and not cfg.image.tensorflow else ()),
        ),
    )


def _image(cfg: JobConfig, backend: SpecRules, info: MachineInfo) -> tuple[str, str | None]:
    """The image and the TensorFlow version: the config's own image (with ``image.uri``, the version is what
    ``--local`` installs), else the catalog's training image for the cloud, region, version and machine."""
    tf_version = None if cfg.container else cfg.image.tensorflow
    image = cfg.container.image_uri if cfg.container else cfg.image.uri
    if image is not None:
        return image, tf_version
    # --local runs the CPU/GPU image instead
    tpu = info.tpu is not None and Capability.TPUS in backend.facts.capabilities
    tf_version = cfg.image.tensorflow or catalog.default_tensorflow(cfg.cloud, tpu=tpu)
    image = catalog.training_image(
        cfg.cloud,
        backend.facts.image_region or cfg.region,
        tf_version,
        gpu=info.accelerator_count > 0 and info.tpu is None,
        py_version=catalog.python_tag(cfg.image.python),
        tpu=tpu,
    )
    return image, tf_version


def _machine(cfg: JobConfig, info: MachineInfo) -> MachineSpec:
    return MachineSpec(
        type=info.machine_type,
        accelerator=info.accelerator,
        accelerator_count=info.accelerator_count,
        gpu_model=info.gpu.name if info.gpu else None,
        disk_gb=cfg.machine.disk_gb,
        price_per_hour=info.price_per_hour,
        price_region=info.price_region,
        price_date=info.price_date,
        tpu_cores=info.tpu.cores if info.tpu else 0,
        tpu_topology=(cfg.machine.tpu_topology or info.tpu.topology) if info.tpu else None,
    )


def _job_dir_args(cfg: JobConfig, writes_buckets: bool) -> tuple[str, ...]:
    """ML Engine passed the job dir to the module as ``--job-dir``; so does cloudtrain (not twice, and
    not a bucket path to a backend that cannot write there: a local run writes to its local folder)."""
    if not cfg.job_dir or any(a == "--job-dir" or a.startswith("--job-dir=") for a in cfg.args):
        return ()
    if "://" in cfg.job_dir and not writes_buckets:
        return ()
    return (f"--job-dir={cfg.job_dir.rstrip('/')}",)


def build_channels(loaded: LoadedConfig) -> dict[str, DataChannel]:
    """``data:`` → channels; local folders made absolute (relative to the config's folder)."""
    channels = {}
    for name, entry in loaded.config.data.items():
        source, settings = (
            (entry, {}) if isinstance(entry, str) else (entry.source, entry.model_dump(exclude={"source"}))
        )
        if schemes.source_kind(source) == "local":
            source = str((loaded.base_dir / source).resolve())
        # a bucket path is kept as written: keys are literal (validate refuses `//` and `/./` in one)
        channels[name] = DataChannel(name, source, **{k: v for k, v in settings.items() if v is not None})
    return channels
