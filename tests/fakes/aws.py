"""AWS for tests and benches: a moto server on 127.0.0.1, and hands on its state.

``ThreadedMotoServer`` runs in this process, so moto's backend objects are shared: the
tests drive what moto cannot (a job's progression through states, its failure reason,
billable seconds) by editing them directly, and write CloudWatch logs as SageMaker
would through the ordinary API.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

ACCOUNT = "123456789012"  # moto's default account
ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/SageMakerRole"
LOG_GROUP = "/aws/sagemaker/TrainingJobs"
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}


class MotoAws:
    """A started moto server: its endpoint, clients for it, and its backends."""

    def __init__(self, server: Any):
        self.server = server
        host, port = server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        self._clients: dict[tuple[str, str], Any] = {}

    def client(self, service: str, region: str) -> Any:
        """A client straight to the server (made once: building one costs up to 0.4 s)."""
        import boto3

        key = (service, region)
        if key not in self._clients:
            self._clients[key] = boto3.session.Session().client(
                service,
                region_name=region,
                endpoint_url=self.endpoint,
                aws_access_key_id="testing",
                aws_secret_access_key="testing",
            )
        return self._clients[key]

    def reset(self) -> None:
        """Forget every bucket, job and log stream."""
        request = urllib.request.Request(f"{self.endpoint}/moto-api/reset", method="POST")
        with urllib.request.urlopen(request, timeout=10):
            pass

    # -- SageMaker -------------------------------------------------------------------

    def training_job(self, region: str, name: str) -> Any:
        from moto.backends import get_backend

        return get_backend("sagemaker")[ACCOUNT][region].training_jobs[name]

    def set_job(
        self,
        region: str,
        name: str,
        status: str,
        secondary: str | None = None,
        *,
        failure_reason: str | None = None,
        training_seconds: int | None = None,
        billable_seconds: int | None = None,
        transitions: list[dict[str, Any]] | None = None,
    ) -> None:
        """Move a job moto created to another state (moto marks every job Completed at once).

        ``transitions``: its ``SecondaryStatusTransitions`` as SageMaker reports them (moto records only
        one ``Starting``), e.g. a managed spot job's ``Interrupted`` and its restart."""
        job = self.training_job(region, name)
        if transitions is not None:
            job.secondary_status_transitions = transitions
        job.training_job_status = status
        job.secondary_status = secondary or status
        job.failure_reason = failure_reason
        job.training_time_in_seconds = training_seconds
        job.billable_time_in_seconds = billable_seconds


def env_for(endpoint: str, default_region: str = "us-east-1") -> dict[str, str]:
    """Environment for cloudtrain to reach the moto server with fake credentials."""
    return {
        **FAKE_CREDENTIALS,
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_DEFAULT_REGION": default_region,
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def use_moto(monkeypatch: Any, moto: MotoAws, default_region: str = "us-east-1") -> None:
    """Point boto3 at ``moto`` for one test: endpoint, fake credentials, a default region."""
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    for key, value in env_for(moto.endpoint, default_region).items():
        monkeypatch.setenv(key, value)


def _training_job_names_stay_taken() -> None:
    """Make moto refuse a second CreateTrainingJob of a name with ResourceInUse, as SageMaker does
    (moto 5 silently replaces the first job). Patched once, on moto's backend class."""
    from moto.sagemaker.exceptions import ResourceInUseException
    from moto.sagemaker.models import SageMakerModelBackend

    create = SageMakerModelBackend.create_training_job
    if getattr(create, "names_stay_taken", False):
        return

    def create_training_job(self, training_job_name, *args, **kwargs):
        if training_job_name in self.training_jobs:
            raise ResourceInUseException(
                f"Training job names must be unique within an AWS account and region, "
                f"and a training job with this name already exists ({training_job_name})"
            )
        return create(self, training_job_name, *args, **kwargs)

    create_training_job.names_stay_taken = True  # type: ignore[attr-defined]  # marks the patch as applied
    SageMakerModelBackend.create_training_job = create_training_job  # type: ignore[method-assign]  # patching moto


@contextlib.contextmanager
def moto_server() -> Iterator[MotoAws]:
    """A moto server on a free port of 127.0.0.1, always stopped."""
    from moto.server import ThreadedMotoServer

    _training_job_names_stay_taken()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        yield MotoAws(server)
    finally:
        server.stop()


class LogWriter:
    """Writes a job's instance logs into CloudWatch as SageMaker does: one stream per instance."""

    def __init__(self, logs_client: Any, job_name: str):
        self.client = logs_client
        self.job_name = job_name
        self.lock = threading.Lock()
        with contextlib.suppress(self.client.exceptions.ResourceAlreadyExistsException):
            self.client.create_log_group(logGroupName=LOG_GROUP)

    def stream_name(self, instance: int, started: int = 1700000000) -> str:
        return f"{self.job_name}/algo-{instance}-{started}"

    def open(self, instance: int, started: int = 1700000000) -> str:
        name = self.stream_name(instance, started)
        self.client.create_log_stream(logGroupName=LOG_GROUP, logStreamName=name)
        return name

    def write(self, stream: str, messages: list[str], start_ms: int | None = None, step_ms: int = 1) -> None:
        """Put ``messages`` in order, timestamped from ``start_ms`` (now) ``step_ms`` apart."""
        ts = start_ms if start_ms is not None else int(time.time() * 1000)
        events = [{"timestamp": ts + i * step_ms, "message": m} for i, m in enumerate(messages)]
        for start in range(0, len(events), 10_000):
            self.client.put_log_events(
                logGroupName=LOG_GROUP, logStreamName=stream, logEvents=events[start : start + 10_000]
            )


# -- SageMaker tuning jobs: the two actions moto lacks ---------------------------------------

#: Trial summaries a test gives each tuning job: job name → list of TrainingJobSummaries entries.
TUNING_TRIALS: dict[str, list[dict[str, Any]]] = {}


def add_tuning_actions() -> None:
    """Teach moto's in-process SageMaker ``ListTrainingJobsForHyperParameterTuningJob`` (answering what a
    test put in :data:`TUNING_TRIALS`) and ``StopHyperParameterTuningJob`` (status Stopping → Stopped)."""
    from moto.core.responses import ActionResult, EmptyResult
    from moto.sagemaker.responses import SageMakerResponse

    if hasattr(SageMakerResponse, "list_training_jobs_for_hyper_parameter_tuning_job"):
        return

    def list_trials(self):
        name = self._get_param("HyperParameterTuningJobName")
        self.sagemaker_backend.describe_hyper_parameter_tuning_job(hyper_parameter_tuning_job_name=name)  # 404s
        return ActionResult({"TrainingJobSummaries": TUNING_TRIALS.get(name, [])})

    def stop(self):
        name = self._get_param("HyperParameterTuningJobName")
        self.sagemaker_backend.describe_hyper_parameter_tuning_job(hyper_parameter_tuning_job_name=name)
        self.sagemaker_backend.hyper_parameter_tuning_jobs[name].hyper_parameter_tuning_job_status = "Stopped"
        return EmptyResult()

    # two operations moto does not answer, added to its SageMaker responses
    SageMakerResponse.list_training_jobs_for_hyper_parameter_tuning_job = list_trials  # type: ignore[attr-defined]
    SageMakerResponse.stop_hyper_parameter_tuning_job = stop  # type: ignore[attr-defined]


# -- SageMaker capacity: refusals and start-up failures worded as SageMaker words them ------------

#: Instance types whose CreateTrainingJob is refused for the account's quota (ResourceLimitExceeded).
NO_QUOTA: set[str] = set()
#: Instance types whose jobs are created, then fail while starting for lack of machines (CapacityError).
NO_CAPACITY: set[str] = set()
CAPACITY_ERROR = (
    "CapacityError: Unable to provision requested ML compute capacity. Please retry using a different ML instance type."
)


def add_capacity_faults() -> None:
    """Wrap moto's CreateTrainingJob (in this process) to answer as SageMaker does when an instance type
    has no quota or no capacity: see :data:`NO_QUOTA` and :data:`NO_CAPACITY`."""
    from moto.sagemaker.exceptions import SagemakerClientError
    from moto.sagemaker.responses import SageMakerResponse

    if getattr(SageMakerResponse.create_training_job, "_capacity_faults", False):
        return
    original = SageMakerResponse.create_training_job

    class ResourceLimitExceeded(SagemakerClientError):
        code = "ResourceLimitExceeded"

    def create(self):
        instance = (self._get_param("ResourceConfig") or {}).get("InstanceType")
        if instance in NO_QUOTA:
            raise ResourceLimitExceeded(
                f"The account-level service limit '{instance} for training job usage' is 0 "
                "Instances, with current utilization of 0 Instances and a request delta of 1 "
                "Instances. Please use AWS Service Quotas to request an increase for this "
                "quota."
            )
        result = original(self)
        if instance in NO_CAPACITY:
            job = self.sagemaker_backend.training_jobs[self._get_param("TrainingJobName")]
            job.training_job_status, job.secondary_status = "Failed", "Failed"
            job.failure_reason = CAPACITY_ERROR
        return result

    create._capacity_faults = True  # type: ignore[attr-defined]  # marks the patch as applied
    SageMakerResponse.create_training_job = create  # type: ignore[method-assign]  # patching moto in place
