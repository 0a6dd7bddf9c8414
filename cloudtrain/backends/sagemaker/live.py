"""What the SageMaker backend does beyond rendering: upload, create, attach, list, follow, and a sweep's request
(which a job's dry run never makes). :mod:`.backend` loads it through its one door (``SageMakerBackend._live``)
when one of these is called: ``--help`` and a job's ``--dry-run`` never do."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cloudtrain.backends.base import JobStatus, region_given
from cloudtrain.data.stores import S3Store
from cloudtrain.data.upload import default_progress, upload_channels
from cloudtrain.errors import UsageError
from cloudtrain.packaging import BuiltPackage, required
from cloudtrain.spec import JobSpec

from . import jobs, request
from .aws import AwsClients, error_code, translated
from .jobs import SageMakerJob
from .tuning import create_tuning_job
from .tuning_jobs import SageMakerSweep
from .upload import split_s3, upload_sourcedir

log = logging.getLogger("cloudtrain.sagemaker")


@dataclass
class Live:
    """The calls, with the options of the :class:`~.backend.SageMakerBackend` that makes one for each."""

    clients: Callable[[str], AwsClients]
    sleep: Callable[[float], None]
    clock: Callable[[], float]
    tailer_options: dict[str, Any]

    def bucket_store(self, spec: JobSpec, bucket: str) -> S3Store:
        return S3Store(AwsClients(spec.region).s3, bucket, translated)

    def render_sweep(self, spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
        return create_tuning_job(spec, package)

    def submit(
        self, spec: JobSpec, package: BuiltPackage | None, params: dict[str, Any]
    ) -> SageMakerJob | SageMakerSweep:
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
        _create(clients, params)
        log.info("created training job %s in %s", spec.job_name, spec.region)
        job = self._job(spec.job_name, clients)
        job.uploaded = uploaded
        return job

    def attach(self, job_id: str, *, region: str | None = None) -> SageMakerJob:
        region = region_given(region, f"job {job_id}: a SageMaker training job is found by its region")
        job = self._job(job_id, self.clients(region))
        job.status()  # one clear line now if there is no such job
        return job

    def attach_sweep(self, job_id: str, *, region: str | None = None) -> SageMakerSweep:
        region = region_given(region, f"sweep {job_id}: a SageMaker tuning job is found by its region")
        return SageMakerSweep(job_id, self.clients(region), sleep=self.sleep)

    def list_jobs(self, *, region: str | None = None, limit: int = 20) -> list[JobStatus]:
        region = region_given(region, "SageMaker training jobs are listed by region")
        return jobs.list_jobs(self.clients(region), limit)

    def _create_sweep(self, clients: AwsClients, params: dict[str, Any]) -> SageMakerSweep:
        name = params["HyperParameterTuningJobName"]
        with translated(f"creating tuning job {name}"):
            clients.sagemaker.create_hyper_parameter_tuning_job(**params)
        log.info("created tuning job %s in %s", name, clients.region)
        return SageMakerSweep(name, clients, sleep=self.sleep)

    def _job(self, job_id: str, clients: AwsClients) -> SageMakerJob:
        return SageMakerJob(job_id, clients, sleep=self.sleep, clock=self.clock, tailer_options=self.tailer_options)


def _create(clients: AwsClients, params: dict[str, Any]) -> None:
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
