"""The job config schema: what a YAML file may say, typed and strict. Unknown keys are refused, booleans accept only
``true``/``false``, durations read as ``90s``, ``30m``, ``24h``, ``2d`` or seconds; catalog and file checks are in
:mod:`cloudtrain.config.checks`. Annotations are evaluated as the classes are defined (no ``from __future__``)."""

import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from cloudtrain import backend_rules, catalog
from cloudtrain.backend_rules import Capability, rules
from cloudtrain.config.records import (
    BeforeValidator,
    Field,
    Record,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    no_float_version,
)
from cloudtrain.secrets.masking import ValueMasker, secret_values
from cloudtrain.secrets.refs import parse_ref

if TYPE_CHECKING:  # the names are data, read at run time; the checker sees strings
    Cloud = str
    BackendName = str
else:
    #: The clouds with a catalog: a local run's ``target``, a fallback's ``backend``.
    Cloud = Literal[catalog.clouds()]
    #: Every registered backend, in registration order (the registry imports none of them).
    BackendName = Literal[backend_rules.names()]

_DURATION = re.compile(r"^\s*(?:(\d+)d)?\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s)?\s*$")


def parse_duration(value: object) -> object:
    """``"1h30m"`` → 5400. Ints are seconds. Anything else is left for the type check to refuse."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match and any(match.groups()):
            d, h, m, s = (int(g or 0) for g in match.groups())
            return ((d * 24 + h) * 60 + m) * 60 + s
        raise ValueError(f"cannot read {value!r} as a duration; write e.g. 90s, 30m, 24h, 2d or 1h30m")
    return value


def _secret_ref(value: object) -> object:
    """A ``secrets:`` value must be a reference (``shell:``, ``gcp:``, ``aws:``), never the secret itself."""
    if isinstance(value, str):
        parse_ref(value.strip())
    return value


def _finite(value: object) -> object:
    """``.inf`` and ``.nan`` are numbers to YAML, and no budget, bound or value a job can use."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("a number here must be finite (YAML reads .inf and .nan as numbers)")
    return value


Seconds = Annotated[StrictInt, BeforeValidator(parse_duration), Field(gt=0)]
#: A number that must be finite: a budget, a sweep bound or value (YAML reads ``.inf`` and ``.nan`` as floats).
Finite = Annotated[StrictInt | StrictFloat, BeforeValidator(_finite)]
#: The largest budgets taken: far above any real one, and small enough that a price × time stays a number.
MAX_USD = 10_000_000
MAX_HOURS = 87_600  # ten years
Scalar = StrictBool | StrictInt | StrictFloat | StrictStr
#: What gcloud accepted as a job id (letters, digits, ``_``) plus ``-``; SageMaker gets ``_`` → ``-``.
JobName = Annotated[StrictStr, Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,127}$")]


class Machine(Record):
    type: StrictStr = Field(
        description="Vertex machine type (n1-standard-16) or SageMaker instance type (ml.g4dn.12xlarge)."
    )
    accelerator: StrictStr | None = Field(
        None, description="Vertex accelerator (NVIDIA_TESLA_T4); on SageMaker implied by the instance type."
    )
    accelerator_count: Annotated[StrictInt, Field(ge=0)] = Field(
        0, description="GPUs per replica; 0 means none (Vertex) or the instance's own count (SageMaker)."
    )
    accelerator_type: StrictStr | None = Field(
        None,
        description="A cluster's GPU type as its gres names it (h100, a100): --gres=gpu:TYPE:COUNT on Slurm; "
        "unset = any GPU. The clouds take machine.accelerator.",
    )
    disk_gb: Annotated[StrictInt, Field(ge=10, le=65536)] = Field(100, description="Boot/volume disk size in GB.")
    tpu_topology: StrictStr | None = Field(
        None, description="Vertex TPU v5e topology (2x2); unset = the machine type's own. Single-host only."
    )


class Package(Record):
    path: StrictStr = Field(
        "trainer",
        description="The Python package directory (with `script`: the source folder), relative to this config file.",
    )
    module: StrictStr = Field("trainer.task", description="Module run as `python -m MODULE`.")
    script: StrictStr | None = Field(
        None,
        description="A script in the source folder `path`, run as `python SCRIPT ARGS` from that folder "
        "(SageMaker's entry_point); replaces `module`.",
    )
    requirements: list[StrictStr] = Field(default_factory=list, description="Extra pip requirements of the package.")
    name: StrictStr | None = Field(
        None,
        description="Distribution name; unset = from the package's setup.py / pyproject.toml, else the folder name.",
    )
    version: StrictStr | None = Field(
        None, description="Distribution version; unset = from the package's setup.py / pyproject.toml, else 0.0.0."
    )


class Image(Record):
    uri: StrictStr | None = Field(None, description="An explicit training image; overrides `tensorflow`.")
    tensorflow: Annotated[StrictStr | None, BeforeValidator(no_float_version)] = Field(
        None, description='TensorFlow version of the prebuilt image, e.g. "2.17" (quoted). Default: newest.'
    )
    python: Annotated[StrictStr | None, BeforeValidator(no_float_version)] = Field(
        None, description='Python of the prebuilt image where it comes in several, e.g. "3.9". Default: its newest.'
    )


class Container(Record):
    """Your own training container, run as it is: nothing is packaged or uploaded (Vertex containerSpec)."""

    image_uri: StrictStr = Field(description="The image: any registry on Vertex AI; an ECR image on SageMaker.")
    command: list[StrictStr] = Field(
        default_factory=list, description="Overrides the image's ENTRYPOINT; empty = the image's own. `args` follow it."
    )


class Spot(Record):
    enabled: StrictBool = Field(False, description="Use spot / preemptible capacity.")
    max_wait: Seconds | None = Field(None, description="SageMaker: total time including waiting for capacity.")


class FlexStart(Record):
    enabled: StrictBool = Field(
        False,
        description="Vertex AI Dynamic Workload Scheduler (Scheduling.strategy "
        "FLEX_START): wait for scarce GPUs instead of failing; not with spot.",
    )
    max_wait: Seconds | None = Field(
        None, description="How long to wait for the machines (Scheduling.maxWaitDuration)."
    )


class Budget(Record):
    max_usd: Annotated[Finite, Field(gt=0, le=MAX_USD)] | None = Field(
        None, description="Hard cap: each candidate's max runtime is cut so that its price × time stays under it."
    )
    max_hours: Annotated[Finite, Field(gt=0, le=MAX_HOURS)] | None = Field(
        None, description="Expected run time, for the cost estimate before submit."
    )
    max_gpu_hours: Annotated[Finite, Field(gt=0, le=MAX_HOURS * 1000)] | None = Field(
        None,
        description="Hard cap in GPU-hours (GPUs × hours): the run's time limit is cut to fit it; a "
        "backend that cannot honour it refuses it (Slurm honours it as --time).",
    )


class DataChannel(Record):
    source: StrictStr = Field(
        description="gs://bucket/path (Vertex AI), s3://bucket/path (SageMaker) or a local folder."
    )
    input_mode: Literal["File", "FastFile"] | None = Field(
        None, description="SageMaker: File (copied before start, the default) or FastFile (streamed on read)."
    )
    distribution: Literal["FullyReplicated", "ShardedByS3Key"] | None = Field(
        None, description="SageMaker: every instance gets all objects (FullyReplicated, the default) or a share."
    )


class FallbackMachine(Record):
    type: StrictStr | None = None
    accelerator: StrictStr | None = None
    accelerator_count: Annotated[StrictInt, Field(ge=0)] | None = None
    disk_gb: Annotated[StrictInt, Field(ge=10, le=65536)] | None = None


class Fallback(Record):
    """One more candidate, tried when the ones before it got no capacity or quota: what it changes."""

    backend: Cloud | None = None
    region: StrictStr | None = None
    project: StrictStr | None = None
    role_arn: StrictStr | None = None
    staging_bucket: StrictStr | None = None
    output_dir: StrictStr | None = None
    machine: FallbackMachine | None = None
    spot: Spot | None = None
    flex_start: FlexStart | None = None
    image: Image | None = None
    data: dict[StrictStr, StrictStr | DataChannel] | None = None
    max_runtime: Seconds | None = None


class SweepParam(Record):
    """One tuned parameter: ``{min, max}`` (with ``scale``) or ``values``; the type is inferred."""

    type: Literal["double", "integer", "discrete", "categorical"] | None = Field(
        None,
        description="Inferred: {min, max} of floats → double, of integers → integer; values of numbers → "
        "discrete, of strings → categorical.",
    )
    min: Finite | None = Field(None, description="Lower bound of a double or integer range.")
    max: Finite | None = Field(None, description="Upper bound of a double or integer range.")
    scale: Literal["linear", "log", "reverse_log"] = Field("linear", description="How a range is sampled.")
    values: list[StrictBool | Finite | StrictStr] | None = Field(
        None, description="The discrete or categorical values."
    )


class Sweep(Record):
    """A hyperparameter sweep: Vertex HyperparameterTuningJob, SageMaker tuning job, or Optuna locally."""

    metric: StrictStr = Field(description="The metric the trials report, e.g. val_accuracy.")
    goal: Literal["maximize", "minimize"] = Field("maximize", description="Whether a larger metric is better.")
    max_trials: Annotated[StrictInt, Field(ge=1, le=1000)] = Field(8, description="Trials in total.")
    parallel_trials: Annotated[StrictInt, Field(ge=1, le=100)] = Field(1, description="Trials at the same time.")
    max_failed_trials: Annotated[StrictInt, Field(ge=0)] | None = Field(
        None, description="Stop the sweep after this many failed trials (default: the cloud's)."
    )
    algorithm: Literal["random", "grid", "bayesian"] = Field("bayesian", description="How trials are chosen.")
    early_stopping: StrictBool = Field(False, description="Stop unpromising trials early (median rule).")
    seed: StrictInt | None = Field(None, description="Local sweeps: the sampler's seed, for a repeatable sweep.")
    params: dict[StrictStr, SweepParam] = Field(description="Parameter name → range or values.")


class Enabled(Record):
    enabled: StrictBool = Field(False, description="Turn it on.")


class Distribution(Record):
    """The SageMaker TensorFlow estimator's ``distribution``, for scripts written for it."""

    multi_worker_mirrored_strategy: Enabled | None = Field(
        None, description="TF_CONFIG for MultiWorkerMirroredStrategy: what replica_count > 1 does anyway."
    )
    parameter_server: Enabled | None = Field(None, description="SageMaker's parameter servers, beside each worker.")
    mpi: dict[StrictStr, Any] | None = Field(None, description="Not supported (refused).")
    smdistributed: dict[StrictStr, Any] | None = Field(None, description="Not supported (refused).")


class JobConfig(Record):
    """A training job, as written in `job_configs/*.yaml`."""

    def __repr__(self) -> str:  # env: values and secret-named options show as *** (in str() too: it is repr())
        return ValueMasker(secret_values(self.env, self.args, self.hyperparameters))(super().__repr__())

    name: JobName = Field(description="Job name: letters, digits, _ and -, starting with a letter, at most 128.")
    name_suffix: StrictBool = Field(
        True,
        description="Append a per-submit suffix to the name. The gcloud forms set false: on Vertex the display "
        "name is the JOB as given (Vertex's job id is unique); SageMaker always gets the suffix.",
    )
    backend: BackendName = Field(
        description="Where it runs: vertex, sagemaker, local (this machine) or slurm (a Slurm cluster)."
    )
    target: Cloud | None = Field(None, description="With backend local: whose environment contract to follow.")
    region: StrictStr = Field(description="Cloud region, e.g. us-central1 or us-east-1.")
    project: StrictStr | None = Field(None, description="Vertex: the Google Cloud project id.")
    role_arn: StrictStr | None = Field(None, description="SageMaker: the execution role ARN.")
    staging_bucket: StrictStr | None = Field(None, description="gs://bucket (Vertex) or s3://bucket (SageMaker).")
    machine: Machine
    replica_count: Annotated[StrictInt, Field(ge=1, le=512)] = Field(1, description="Machines (replicas).")
    package: Package = Field(default_factory=Package)
    container: Container | None = Field(
        None, description="Run this container instead of a package: `package` and `image` are then not used."
    )
    args: list[StrictStr] = Field(default_factory=list, description="Command-line args for the module.")
    hyperparameters: dict[StrictStr, Scalar] = Field(
        default_factory=dict, description="Passed as --key=value args (Vertex) or HyperParameters (SageMaker)."
    )
    image: Image = Field(default_factory=Image)
    output_dir: StrictStr | None = Field(None, description="Where the job writes; default under the staging bucket.")
    job_dir: StrictStr | None = Field(
        None,
        description="ML Engine's job dir, used as given: the output dir (unless output_dir is set), passed to the "
        "module as --job-dir, and where packages are staged (<job_dir>/packages/<sha256>/) without staging_bucket.",
    )
    spot: Spot = Field(default_factory=Spot)
    max_runtime: Seconds = Field(86400, description="Stop the job after this long (e.g. 24h).")
    service_account: StrictStr | None = None
    network: StrictStr | None = Field(None, description="Vertex: VPC network; SageMaker: not supported here.")
    labels: dict[StrictStr, StrictStr] = Field(default_factory=dict, description="Vertex labels / SageMaker tags.")
    tensorboard: StrictStr | StrictBool | None = Field(
        None,
        description="Managed TensorBoard. Vertex AI: a TensorBoard instance, projects/P/locations/REGION/"
        "tensorboards/ID (needs service_account); SageMaker: true, or an s3:// path, for TensorBoardOutputConfig. "
        "Local and Slurm runs need none: `cloudtrain tensorboard JOB` serves them.",
    )
    experiment: StrictStr | None = Field(
        None,
        description="Group runs: a SageMaker experiment (ExperimentConfig), a Vertex label, the name in this "
        "machine's history (list/report/tensorboard --experiment). Lowercase letters, digits and -, at most 63.",
    )
    env: dict[StrictStr, StrictStr] = Field(default_factory=dict, description="Environment variables for the job.")
    secrets: dict[StrictStr, Annotated[StrictStr, BeforeValidator(_secret_ref)]] = Field(
        default_factory=dict,
        description="Environment variables read from a secret store when the job starts: NAME → shell:VAR "
        "(--local only), gcp:projects/P/secrets/S/versions/latest or aws:arn:aws:secretsmanager:…; "
        "the request carries the reference, never the value (docs/how-to/secrets.md).",
    )
    model_dir: StrictBool | None = Field(
        None,
        description="package.script jobs: pass --model_dir (S3 path on SageMaker, AIP_MODEL_DIR on Vertex, the "
        "run's model folder locally). Unset: as the cloud does: SageMaker's estimator adds it, Vertex AI passes "
        "a script only its args; true: always; false: never.",
    )
    distribution: Distribution | None = Field(
        None, description="SageMaker estimator spelling: {multi_worker_mirrored_strategy: {enabled: true}}."
    )
    data: dict[StrictStr, StrictStr | DataChannel] = Field(
        default_factory=dict,
        description="Input channels: name → gs:// or s3:// prefix or local folder (or a mapping with `source`); "
        "the code finds each at $SM_CHANNEL_<NAME>.",
    )
    sweep: Sweep | None = Field(None, description="Run a hyperparameter sweep of this job instead of one run.")
    flex_start: FlexStart = Field(default_factory=FlexStart)
    max_queue: Seconds | None = Field(
        None, description="A job still queued after this long is cancelled and the next fallback is tried."
    )
    budget: Budget | None = Field(None, description="Cost cap (max_usd) and expected hours (max_hours).")
    fallback: list[Fallback] = Field(
        default_factory=list, description="Candidates tried in order when the main request gets no capacity or quota."
    )
    # then each registered backend's own `<name>:` section (add_sections)

    @property
    def cloud(self) -> str:
        """The cloud whose catalog and contract apply: the backend's own, or the ``target`` of one that
        follows another's (a local run); the backend says (``BackendFacts.contract``)."""
        backend = rules(self.backend)
        if Capability.FOLLOWS_TARGET in backend.facts.capabilities and self.target:
            return self.target
        return backend.facts.contract or self.backend

    def section(self, name: str) -> Any:
        """The ``<name>:`` section of a registered backend (the schema adds them from the registry, so the
        checker cannot see them as attributes): its record, else None (see :func:`add_sections`)."""
        return getattr(self, name, None)


def add_sections(config: type[JobConfig], names: Iterable[str]) -> None:
    """Give ``config`` the ``<name>:`` section of each of these backends that has one (the registry names the
    record), after the other keys: optional (None where the file has none), or, for a record that says
    ``section_always``, its defaults there. A backend's keys need no edit here."""
    fields = dict(config.model_fields)
    for name, found in backend_rules.sections(names).items():
        section = cast(type[Record], found)  # the registry names its record (a config type it cannot import)
        always, described = section.section_always, section.section_description
        field = Field(default_factory=section, description=described) if always else Field(None, description=described)
        fields[name] = field.of(section if always else section | None)
    config.model_fields = fields


#: The backends registered when the config was first imported: :class:`JobConfig`'s ``backend:`` values and
#: sections, what ``cloudtrain schema`` and the generated reference show (cloudtrain's own backends).
_BUILT_WITH = backend_rules.names()
add_sections(JobConfig, _BUILT_WITH)


def config_with_sections(names: Iterable[str]) -> type[JobConfig]:
    """A :class:`JobConfig` that also reads the sections of these backends (registered since)."""
    config = type("JobConfig", (JobConfig,), {"__doc__": JobConfig.__doc__, "__module__": __name__})
    add_sections(config, names)
    return config


_REGISTERED: dict[tuple[str, ...], type[JobConfig]] = {_BUILT_WITH: JobConfig}


def registered_config() -> type[JobConfig]:
    """The config a file is validated with: :class:`JobConfig`, or, once a backend joined the registry since it was
    built (a plugin), one whose ``backend:`` takes every name registered now, built once per set of names."""
    names = backend_rules.names()
    if names not in _REGISTERED:
        config = _REGISTERED[names] = config_with_sections(name for name in names if name not in _BUILT_WITH)
        backend = Field(description=JobConfig.model_fields["backend"].description)
        config.model_fields = {**config.model_fields, "backend": backend.of(cast(Any, Literal)[names])}
    return _REGISTERED[names]
