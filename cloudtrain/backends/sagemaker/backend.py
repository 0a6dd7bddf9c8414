"""The SageMaker backend: render, submit, attach, list; the calls beyond rendering (boto3's) are :mod:`.live`'s."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cloudtrain.backend_rules import Capabilities, Capability, Refusal
from cloudtrain.backends.base import BackendFacts, CatalogMachines, Facts, JobStatus, Words
from cloudtrain.backends.sagemaker.job_settings import SageMakerSettings
from cloudtrain.catalog.cost import Cost
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.schema import JobConfig
from cloudtrain.data.staging import stage
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec

from . import checks, contract, cost, request
from .aws import AwsClients
from .entry_shell import hyperparameter_warnings

if TYPE_CHECKING:  # what only the live calls use (.live): --help and a job's --dry-run never load it
    from cloudtrain.data.stores import S3Store

    from .jobs import SageMakerJob
    from .live import Live
    from .tuning_jobs import SageMakerSweep


class SageMakerBackend(CatalogMachines, BackendFacts):
    name = "sagemaker"
    facts = Facts(
        required_keys=("region", "role_arn"),
        location_keys=("region",),
        storage_schemes=("s3",),
        max_runtime_seconds=28 * 86400,  # StoppingCondition.MaxRuntimeInSeconds
        job_name_limit=63,  # TrainingJobName
        capabilities=Capabilities.of(
            {
                Capability.BILLED,
                Capability.WRITES_BUCKETS,
                Capability.CONTAINERS,
                Capability.MANAGED_TENSORBOARD,  # TensorBoardOutputConfig
                Capability.STAGING,
                Capability.SPOT_MAX_WAIT,  # StoppingCondition.MaxWaitTimeInSeconds
                Capability.SCRIPT_MODEL_DIR,  # sagemaker.tensorflow.TensorFlow.hyperparameters() adds model_dir
                Capability.PARAMETER_SERVERS,  # the TF toolkit starts them (sagemaker_parameter_server_enabled)
            },
            FLEX_START=Refusal(
                "flex_start (Dynamic Workload Scheduler) is a Vertex AI strategy; SageMaker training jobs have none",
                "remove flex_start, or use spot with spot.max_wait",
            ),
            ANY_REGISTRY=Refusal(
                "SageMaker runs images from Amazon ECR only, not {image}",
                "push the image to ECR (docker tag + docker push) and set container.image_uri to "
                "ACCOUNT.dkr.ecr.REGION.amazonaws.com/NAME:TAG",
            ),
            # the training toolkit passes a script its hyperparameters only
            SCRIPT_ARGS=Refusal(
                "SageMaker passes a script only its hyperparameters (as --name value)",
                "move each argument to hyperparameters: {{name: value}}",
            ),
        ),
        max_channels=20,  # InputDataConfig
        channel_options=("input_mode", "distribution"),  # S3DataSource's
        max_parallel_trials=checks.MAX_PARALLEL_TRIALS,
        max_categorical_values=checks.MAX_CATEGORICAL_VALUES,
        secret_kind="aws",  # Secrets Manager, read by the launcher with the job's role
        image_registry=checks.ECR_IMAGE,
        tf_image=re.compile(r"/tensorflow-training:(\d+)\.(\d+)(?:\.\d+)?-"),
        job_id_pattern=re.compile(r"^arn:aws[a-z-]*:sagemaker:(?P<region>[^:]+):\d+:training-job/(?P<id>.+)$"),
    )
    words = Words(
        title="SageMaker",
        machine_word="instance type",
        submit_needs="role_arn and an s3:// staging_bucket",
        spot_basis=cost.SPOT_BASIS,
        model_dir_words="SM_MODEL_DIR (/opt/ml/model)",
    )
    local_contract = contract.CONTRACT

    def bucket_store(self, spec: JobSpec, bucket: str) -> S3Store:
        """An S3 bucket, read with boto3's credentials in the spec's region."""
        return self._live().bucket_store(spec, bucket)

    def job_name(self, name: str, tail: str) -> str:
        """TrainingJobName allows letters, digits and ``-`` only: ``_`` becomes ``-``."""
        return super().job_name(name.replace("_", "-"), tail)

    def spec_warnings(self, spec: JobSpec) -> list[str]:
        """Hyperparameters the SageMaker toolkit would drop (reserved names)."""
        return hyperparameter_warnings(spec)

    def cost_after(self, status: JobStatus) -> Cost | None:
        return cost.cost_after(status)

    def config_checks(self, loaded: LoadedConfig) -> list[checks.Check]:
        return checks.settings_checks(loaded)

    def contract_checks(self, loaded: LoadedConfig) -> list[checks.Check]:
        return checks.contract_checks(loaded)

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
            return self._live().render_sweep(spec, package)
        return request.create_training_job(spec, package)

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> SageMakerJob | SageMakerSweep:
        """Upload the source dir (unless already there), create the job, return its handle."""
        spec = stage(spec)
        return self._live().submit(spec, package, self.render(spec, package))

    def attach(self, job_id: str, *, region: str | None = None, project: str | None = None) -> SageMakerJob:
        return self._live().attach(job_id, region=region)

    def attach_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> SageMakerSweep:
        return self._live().attach_sweep(job_id, region=region)

    def list_jobs(self, *, region: str | None = None, project: str | None = None, limit: int = 20) -> list[JobStatus]:
        return self._live().list_jobs(region=region, limit=limit)

    def _live(self) -> Live:
        from .live import Live  # all but rendering a job (boto3's calls): not on --help nor a job's --dry-run

        return Live(self.clients, self.sleep, self.clock, self.tailer_options)
