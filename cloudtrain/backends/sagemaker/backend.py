"""The SageMaker backend: render, submit, attach, list (boto3 only inside the methods)."""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Mapping

from cloudtrain.backends.base import JobStatus
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec

from . import request
from .aws import AwsClients, error_code, translated
from .jobs import SageMakerJob, list_jobs
from .upload import split_s3, upload_sourcedir

log = logging.getLogger("cloudtrain.sagemaker")


class SageMakerBackend:
    name = "sagemaker"

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

    def render(self, spec: JobSpec, package: BuiltPackage) -> dict[str, Any]:
        """The ``CreateTrainingJob`` (or, with a sweep, ``CreateHyperParameterTuningJob``) parameters ``submit``
        sends. Pure: no I/O, no boto3."""
        if spec.sweep is not None:
            from .tuning import create_tuning_job

            return create_tuning_job(spec, package)
        return request.create_training_job(spec, package)

    def submit(self, spec: JobSpec, package: BuiltPackage) -> Any:
        """Upload the source dir (unless already there), create the job, return its handle."""
        from cloudtrain.data.staging import default_progress, stage, upload_channels
        from cloudtrain.data.stores import S3Store

        spec = stage(spec)
        params = self.render(spec, package)
        clients = self.clients(spec.region)
        uploaded = upload_sourcedir(clients.s3, package, request.sourcedir_uri(spec, package), spec.region,
                                    script=bool(spec.package.script))  # fmt: skip
        bucket, _ = split_s3(spec.staging_bucket or spec.job_dir or "")
        upload_channels(spec, S3Store(clients.s3, bucket, translated), progress=default_progress)
        if spec.sweep is not None:
            return self._create_sweep(clients, params)
        self._create(clients, params)
        log.info("created training job %s in %s", spec.job_name, spec.region)
        job = self._job(spec.job_name, clients)
        job.uploaded = uploaded
        return job

    def attach(self, job_id: str, *, region: str, project: str | None = None) -> SageMakerJob:
        job = self._job(job_id, self.clients(region))
        job.status()  # one clear line now if there is no such job
        return job

    def attach_sweep(self, job_id: str, *, region: str, project: str | None = None) -> Any:
        from .tuning_jobs import SageMakerSweep

        return SageMakerSweep(job_id, self.clients(region), sleep=self.sleep)

    def _create_sweep(self, clients: AwsClients, params: dict[str, Any]) -> Any:
        from .tuning_jobs import SageMakerSweep

        name = params["HyperParameterTuningJobName"]
        with translated(f"creating tuning job {name}"):
            clients.sagemaker.create_hyper_parameter_tuning_job(**params)
        log.info("created tuning job %s in %s", name, clients.region)
        return SageMakerSweep(name, clients, sleep=self.sleep)

    def list_jobs(self, *, region: str, project: str | None = None, limit: int = 20) -> list[JobStatus]:
        return list_jobs(self.clients(region), limit)

    def _job(self, job_id: str, clients: AwsClients) -> SageMakerJob:
        return SageMakerJob(job_id, clients, sleep=self.sleep, clock=self.clock, tailer_options=self.tailer_options)

    def _create(self, clients: AwsClients, params: dict[str, Any]) -> None:
        import botocore.exceptions

        name = params["TrainingJobName"]
        with translated(f"creating training job {name}"):
            try:
                clients.sagemaker.create_training_job(**params)
                return
            except botocore.exceptions.ClientError as exc:
                # A retried request whose first attempt went through: the job is ours.
                if error_code(exc) != "ResourceInUse" or not self._is_ours(clients, params):
                    raise
        log.info("training job %s already exists with this request; attached to it", name)

    @staticmethod
    def _is_ours(clients: AwsClients, params: dict[str, Any]) -> bool:
        try:
            existing = clients.sagemaker.describe_training_job(TrainingJobName=params["TrainingJobName"])
        except Exception:
            return False
        return existing.get("HyperParameters") == params["HyperParameters"] and existing.get("RoleArn") == params["RoleArn"]

