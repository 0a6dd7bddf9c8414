"""The SageMaker backend: render, submit, attach, list (boto3 only inside the methods)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cloudtrain.backend_rules import Capabilities, Capability, Refusal
from cloudtrain.backends.base import BackendFacts, CatalogMachines, JobStatus, region_given
from cloudtrain.backends.sagemaker.job_settings import SageMakerSettings
from cloudtrain.catalog.cost import Cost
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.schema import JobConfig
from cloudtrain.data.staging import default_progress, stage, upload_channels
from cloudtrain.errors import UsageError
from cloudtrain.packaging import BuiltPackage, required
from cloudtrain.spec import JobSpec

from . import checks, contract, cost, request
from .aws import AwsClients, error_code, translated
from .entry_shell import hyperparameter_warnings

if TYPE_CHECKING:
    from cloudtrain.sweeps.params import Param  # a sweep's parameters: not on a job's dry run

if TYPE_CHECKING:  # the job handle (its log follower) and the uploads load when used: --dry-run renders only
    from cloudtrain.data.stores import S3Store

    from .jobs import SageMakerJob
    from .tuning_jobs import SageMakerSweep

log = logging.getLogger("cloudtrain.sagemaker")


class SageMakerBackend(CatalogMachines, BackendFacts):
    name = "sagemaker"
    title = "SageMaker"
    required_keys = ("region", "role_arn")
    location_keys = ("region",)
    storage_schemes = ("s3",)
    max_runtime_seconds = 28 * 86400  # StoppingCondition.MaxRuntimeInSeconds
    job_name_limit = 63  # TrainingJobName
    capabilities = Capabilities.of(
        {
            Capability.BILLED,
            Capability.WRITES_BUCKETS,
            Capability.CONTAINERS,
            Capability.MANAGED_TENSORBOARD,  # TensorBoardOutputConfig
            Capability.STAGING,
            Capability.SPOT_MAX_WAIT,  # StoppingCondition.MaxWaitTimeInSeconds
            Capability.SCRIPT_MODEL_DIR,  # sagemaker.tensorflow.TensorFlow.hyperparameters() adds model_dir
            Capability.PARAMETER_SERVERS,  # the TF training toolkit starts them (sagemaker_parameter_server_enabled)
        },
        FLEX_START=Refusal(
            "flex_start (Dynamic Workload Scheduler) is a Vertex AI strategy; SageMaker training jobs have none",
            "remove flex_start, or use spot with spot.max_wait",
        ),
        # the training toolkit passes a script its hyperparameters only
        SCRIPT_ARGS=Refusal(
            "SageMaker passes a script only its hyperparameters (as --name value)",
            "move each argument to hyperparameters: {{name: value}}",
        ),
    )
    max_channels = 20  # InputDataConfig
    channel_options = ("input_mode", "distribution")  # S3DataSource's
    secret_kind = "aws"  # Secrets Manager, read by the launcher with the job's role
    machine_word = "instance type"
    submit_needs = "role_arn and an s3:// staging_bucket"
    spot_basis = cost.SPOT_BASIS
    model_dir_words = "SM_MODEL_DIR (/opt/ml/model)"
    image_registry = re.compile(r"\.dkr\.ecr\.")
    tf_image = re.compile(r"/tensorflow-training:(\d+)\.(\d+)(?:\.\d+)?-")
    local_contract = contract.CONTRACT
    job_id_pattern = re.compile(r"^arn:aws[a-z-]*:sagemaker:(?P<region>[^:]+):\d+:training-job/(?P<id>.+)$")

    def bucket_store(self, spec: JobSpec, bucket: str) -> S3Store:
        """An S3 bucket, read with boto3's credentials in the spec's region."""
        from cloudtrain.data.stores import S3Store

        return S3Store(AwsClients(spec.region).s3, bucket, translated)

    def job_name(self, name: str, tail: str) -> str:
        """TrainingJobName allows letters, digits and ``-`` only: ``_`` becomes ``-``."""
        return super().job_name(name.replace("_", "-"), tail)

    def spec_warnings(self, spec: JobSpec) -> list[str]:
        """Hyperparameters the SageMaker toolkit would drop (reserved names)."""
        return hyperparameter_warnings(spec)

    def cost_after(self, status: JobStatus) -> Cost | None:
        return cost.cost_after(status)

    def settings_checks(self, loaded: LoadedConfig) -> list[checks.Check]:
        return checks.settings_checks(loaded)

    def contract_checks(self, loaded: LoadedConfig) -> list[checks.Check]:
        return checks.contract_checks(loaded)

    def check_container(self, loaded: LoadedConfig) -> None:
        checks.check_container(loaded)

    def check_sweep(self, loaded: LoadedConfig, params: list[Param]) -> None:
        checks.check_sweep(loaded, params)

    def job_settings(self, config: JobConfig) -> SageMakerSettings:
        return SageMakerSettings(
            job_dir=config.job_dir.rstrip("/") if config.job_dir else None, role_arn=config.role_arn
        )

    def __init__(
        self,
        *,
        clients: Callable[[str], AwsClients] = AwsClients,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        tailer_options: Mapping[str, Any] | None = None,
    ):
        self.clients = clients
        self.sleep = sleep
        self.clock = clock
        self.tailer_options = dict(tailer_options or {})

    def render(self, spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
        """The ``CreateTrainingJob`` (or, with a sweep, ``CreateHyperParameterTuningJob``) parameters ``submit``
        sends. Pure: no I/O, no boto3."""
        if spec.sweep is not None:
            from .tuning import create_tuning_job  # a sweep's: not on a job's dry run

            return create_tuning_job(spec, package)
        return request.create_training_job(spec, package)

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> SageMakerJob | SageMakerSweep:
        """Upload the source dir (unless already there), create the job, return its handle."""
        from cloudtrain.data.stores import S3Store  # the bucket client's side: not on --dry-run

        from .upload import split_s3, upload_sourcedir  # the uploads: not on --dry-run

        spec = stage(spec)
        params = self.render(spec, package)
        clients = self.clients(spec.region)
        uploaded = None
        if not spec.container:  # the user's own image needs no source dir
            built = required(package, spec.job_name)
            uploaded = upload_sourcedir(
                clients.s3,
                built,
                request.sourcedir_uri(spec, built),
                spec.region,
                script=bool(spec.package.script),
                secrets=bool(spec.secrets),
            )
        bucket, _ = split_s3(spec.staging_bucket or spec.job_dir or "")
        upload_channels(spec, S3Store(clients.s3, bucket, translated), progress=default_progress)
        if spec.sweep is not None:
            return self._create_sweep(clients, params)
        self._create(clients, params)
        log.info("created training job %s in %s", spec.job_name, spec.region)
        job = self._job(spec.job_name, clients)
        job.uploaded = uploaded
        return job

    def attach(self, job_id: str, *, region: str | None = None, project: str | None = None) -> SageMakerJob:
        region = region_given(region, f"job {job_id}: a SageMaker training job is found by its region")
        job = self._job(job_id, self.clients(region))
        job.status()  # one clear line now if there is no such job
        return job

    def attach_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> SageMakerSweep:
        region = region_given(region, f"sweep {job_id}: a SageMaker tuning job is found by its region")
        from .tuning_jobs import SageMakerSweep  # sweeps: not on --dry-run

        return SageMakerSweep(job_id, self.clients(region), sleep=self.sleep)

    def _create_sweep(self, clients: AwsClients, params: dict[str, Any]) -> SageMakerSweep:
        from .tuning_jobs import SageMakerSweep  # sweeps: not on --dry-run

        name = params["HyperParameterTuningJobName"]
        with translated(f"creating tuning job {name}"):
            clients.sagemaker.create_hyper_parameter_tuning_job(**params)
        log.info("created tuning job %s in %s", name, clients.region)
        return SageMakerSweep(name, clients, sleep=self.sleep)

    def list_jobs(self, *, region: str | None = None, project: str | None = None, limit: int = 20) -> list[JobStatus]:
        region = region_given(region, "SageMaker training jobs are listed by region")
        from .jobs import list_jobs  # the handle's module reads logs: not on --dry-run

        return list_jobs(self.clients(region), limit)

    def _job(self, job_id: str, clients: AwsClients) -> SageMakerJob:
        from .jobs import SageMakerJob  # its log follower: not on --dry-run

        return SageMakerJob(job_id, clients, sleep=self.sleep, clock=self.clock, tailer_options=self.tailer_options)

    def _create(self, clients: AwsClients, params: dict[str, Any]) -> None:
        import botocore.exceptions

        name = params["TrainingJobName"]
        with translated(f"creating training job {name}", unreachable_hint=_inspect_hint(name, clients.region)):
            try:
                clients.sagemaker.create_training_job(**params)
                return
            except botocore.exceptions.ClientError as exc:
                if error_code(exc) != "ResourceInUse":
                    raise
                existing = _describe_or_none(clients, name)
                if existing is None:
                    raise
        differs = request_differences(existing, params)
        if differs:
            raise UsageError(
                f"a different training job named {name} already exists in {clients.region} "
                f"({', '.join(differs)} differ); not attaching to it",
                hint="submit again: each submit picks a new job name",
            )
        # A retried request whose first attempt went through: the job is ours.
        log.info("training job %s already exists with this request; attached to it", name)


def _describe_or_none(clients: AwsClients, name: str) -> dict[str, Any] | None:
    try:
        job: dict[str, Any] = clients.sagemaker.describe_training_job(TrainingJobName=name)
        return job
    except Exception:
        return None


def _inspect_hint(name: str, region: str) -> str:
    return (
        f"the job may have been created; see: cloudtrain status {name} --backend sagemaker --region {region}, "
        f"reattach: cloudtrain logs {name} --follow --backend sagemaker --region {region}"
    )


#: What a create call fixes, as (label, path into the request / DescribeTrainingJob response).
_COMPARED = (
    ("instance type", ("ResourceConfig", "InstanceType")),
    ("instance count", ("ResourceConfig", "InstanceCount")),
    ("volume size", ("ResourceConfig", "VolumeSizeInGB")),
    ("image", ("AlgorithmSpecification", "TrainingImage")),
    ("role", ("RoleArn",)),
    ("hyperparameters", ("HyperParameters",)),
    ("input", ("InputDataConfig",)),
    ("output", ("OutputDataConfig", "S3OutputPath")),
    ("stopping condition", ("StoppingCondition",)),
    ("spot", ("EnableManagedSpotTraining",)),
    ("checkpoints", ("CheckpointConfig", "S3Uri")),
)


def request_differences(existing: Mapping[str, Any], params: Mapping[str, Any]) -> list[str]:
    """What differs between an existing job and the request; empty when it is this very request.

    The request hash (a hyperparameter, see :mod:`.request`) covers everything, environment
    and tags included, which DescribeTrainingJob does not all return; the fields listed in
    ``_COMPARED`` name what differs where the response shows it."""
    hash_key = request.REQUEST_HASH
    if existing.get("HyperParameters", {}).get(hash_key) == params["HyperParameters"][hash_key]:
        return []
    differs = []
    for label, path in _COMPARED:
        ours, theirs = _get(params, path), _get(existing, path)
        if label == "hyperparameters":
            ours = {k: v for k, v in (ours or {}).items() if k != hash_key}
            theirs = {k: v for k, v in (theirs or {}).items() if k != hash_key}
        if (ours or None) != (theirs or None):
            differs.append(label)
    return differs or ["environment or tags"]


def _get(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The value at ``path`` in nested mappings; None where a step is missing or not a mapping."""
    found: Any = data
    for key in path:
        found = found.get(key) if isinstance(found, Mapping) else None
    return found
