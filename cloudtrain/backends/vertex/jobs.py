"""The four JobService calls cloudtrain makes, with retries, and the one state table.

Get, cancel and list are idempotent and retried (:mod:`.retry`). Create is not, so before each retry the jobs
with this submit's ``cloudtrain-submit-id`` label are listed: a job the lost attempt created is used, not doubled."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from cloudtrain.backends.base import JobState, JobStatus
from cloudtrain.backends.vertex import request
from cloudtrain.backends.vertex.retry import api_backoff
from cloudtrain.backends.vertex.settings import grpc_transport
from cloudtrain.backoff import Backoff
from cloudtrain.catalog.capacity import classify
from cloudtrain.errors import BackendError, CloudSetupError, CloudUnreachable, NoCapacity
from cloudtrain.secrets.masking import secret_values
from cloudtrain.text import first_line

T = TypeVar("T")

# Vertex AI's JobState → ours; the only place the native states are interpreted.
STATES: dict[str, JobState] = {
    "JOB_STATE_UNSPECIFIED": JobState.UNKNOWN,
    "JOB_STATE_QUEUED": JobState.PENDING,
    "JOB_STATE_PENDING": JobState.PENDING,
    "JOB_STATE_PAUSED": JobState.PENDING,
    "JOB_STATE_RUNNING": JobState.RUNNING,
    "JOB_STATE_UPDATING": JobState.RUNNING,
    "JOB_STATE_CANCELLING": JobState.STOPPING,
    "JOB_STATE_SUCCEEDED": JobState.SUCCEEDED,
    "JOB_STATE_PARTIALLY_SUCCEEDED": JobState.FAILED,  # exit 0 only on full success
    "JOB_STATE_FAILED": JobState.FAILED,
    "JOB_STATE_EXPIRED": JobState.FAILED,
    "JOB_STATE_CANCELLED": JobState.CANCELLED,
}


#: google.rpc.Code of a job's error when it ran past ``scheduling.timeout``.
DEADLINE_EXCEEDED = 4


def to_status(job: Any) -> JobStatus:
    """An ``aiplatform_v1.CustomJob`` → :class:`JobStatus`."""
    project, region, job_id = request.split_job_name(job.name) or ("", "", job.name)
    native = getattr(job.state, "name", f"JOB_STATE_{int(job.state)}")  # a state newer than this client
    state = STATES.get(native, JobState.UNKNOWN)
    if state is JobState.FAILED and job.error.code == DEADLINE_EXCEEDED:
        state = JobState.TIMED_OUT  # Vertex ends a job that outlives scheduling.timeout (max_runtime) this way
    message = job.error.message or None
    url = request.console_url(project, region, job_id)
    details: dict[str, Any] = {
        "display_name": job.display_name,
        "console_url": url,
        "region": region,
        "project": project,
        "labels": dict(job.labels),
    }
    if job.error.code:
        details["error_code"] = job.error.code
    if job.start_time:
        details["start_time"] = job.start_time.isoformat()
    if job.end_time:
        details["end_time"] = job.end_time.isoformat()
    if job.start_time and job.end_time:
        details["run_seconds"] = round((job.end_time - job.start_time).total_seconds())
    if job.web_access_uris:
        details["web_access_uris"] = dict(job.web_access_uris)
    pools = [
        {
            "machine_type": p.machine_spec.machine_type,
            "accelerator_type": getattr(p.machine_spec.accelerator_type, "name", None) or None,
            "accelerator_count": p.machine_spec.accelerator_count,
            "replica_count": p.replica_count,
        }
        for p in job.job_spec.worker_pool_specs
    ]
    if pools:
        details["pools"] = [
            {k: v for k, v in p.items() if v not in (None, "ACCELERATOR_TYPE_UNSPECIFIED")} for p in pools
        ]
    if job.job_spec.scheduling.strategy:
        details["scheduling_strategy"] = getattr(job.job_spec.scheduling.strategy, "name", None)
    if spot_stockout(details, state, message):
        details["spot_interruptions"] = [
            {
                "at": details.get("end_time"),
                "resumed_at": None,
                "source": "Vertex AI STOCKOUT (spot VMs taken back, restarts used up)",
            }
        ]
    specs = [s for p in job.job_spec.worker_pool_specs for s in (p.python_package_spec, p.container_spec)]
    hidden = secret_values({e.name: e.value for s in specs for e in s.env}, [a for s in specs for a in s.args])
    base = job.job_spec.base_output_directory.output_uri_prefix
    if base:  # what `submit --resume` continues: AIP_CHECKPOINT_DIR is <base>/checkpoints
        details["output_dir"] = base.rstrip("/")
        details["checkpoint_dir"] = base.rstrip("/") + "/checkpoints"
    return JobStatus(
        job_id=job_id,
        name=job.name,
        state=state,
        native_state=native,
        message=message if state is not JobState.SUCCEEDED else None,
        console_url=url,
        created=job.create_time or None,
        ended=job.end_time or None,
        details=details,
        first_phase="provisioning",  # Vertex's PENDING: machines being found; start_time marks the image pull
        started=job.start_time or None,
        phase="queued" if native == "JOB_STATE_QUEUED" else None,  # in the queue, before machines are sought
        output_dir=details.get("output_dir"),
        checkpoint_dir=details.get("checkpoint_dir"),
        interruptions=details.get("spot_interruptions"),
        secret_values=hidden,  # the job's secret-looking env: values and options, wherever the cloud says them
    )


def spot_stockout(details: dict[str, Any], state: JobState, message: str | None) -> bool:
    """A spot job that ran and then failed with ``STOCKOUT``: Vertex AI's spot VMs were preempted and its
    restarts used up (cloud.google.com/vertex-ai/docs/predictions/use-spot-vms: a preempted job "fails
    with a STOCKOUT error" after up to six restarts). Earlier restarts leave no trace in the job."""
    return (
        details.get("scheduling_strategy") == "SPOT"
        and state is JobState.FAILED
        and "start_time" in details
        and "stockout" in (message or "").lower()
    )


def custom_job_message(body: dict[str, Any]) -> Any:
    """The rendered REST JSON → ``aiplatform_v1.CustomJob``; unknown fields are an error."""
    from google.cloud.aiplatform_v1.types import CustomJob

    return CustomJob.from_json(json.dumps(body), ignore_unknown_fields=False)


class JobService:
    """``aiplatform_v1.JobServiceClient`` narrowed to get / create / cancel / list."""

    def __init__(self, client: Any, *, backoff: Backoff | None = None, timeout: float = 60.0):
        self.client = client
        self.backoff = backoff or api_backoff()
        self.timeout = timeout

    @classmethod
    def connect(cls, endpoint: Any, creds: Any, *, backoff: Backoff | None = None) -> JobService:
        from google.cloud.aiplatform_v1.services.job_service import JobServiceClient
        from google.cloud.aiplatform_v1.services.job_service.transports.grpc import JobServiceGrpcTransport

        transport = grpc_transport(JobServiceGrpcTransport, endpoint, creds)
        return cls(JobServiceClient(transport=transport), backoff=backoff)

    def get(self, name: str) -> Any:
        return self._call(lambda: self.client.get_custom_job(name=name, retry=None, timeout=self.timeout), name)

    def cancel(self, name: str) -> None:
        from google.api_core.exceptions import FailedPrecondition

        try:
            self._call(lambda: self.client.cancel_custom_job(name=name, retry=None, timeout=self.timeout), name)
        except BackendError as exc:
            if not isinstance(exc.__cause__, FailedPrecondition):  # already ended: nothing to cancel
                raise

    def list(self, parent: str, *, filter: str = "", limit: int | None = None) -> list[Any]:
        def fetch() -> list[Any]:
            jobs: list[Any] = []
            req = {"parent": parent, "filter": filter, "page_size": min(limit or 100, 100)}
            for page in self.client.list_custom_jobs(request=req, retry=None, timeout=self.timeout).pages:
                jobs.extend(page.custom_jobs)
                if limit is not None and len(jobs) >= limit:
                    break
            return jobs

        return self._call(fetch, parent)

    def create(self, parent: str, body: dict[str, Any]) -> Any:
        """Create the job once, however many attempts it takes."""
        from google.api_core import exceptions

        job = custom_job_message(body)
        submit_id = body["labels"][request.SUBMIT_ID_LABEL]

        def attempt() -> Any:
            return self.client.create_custom_job(parent=parent, custom_job=job, retry=None, timeout=self.timeout)

        label = f'labels.{request.SUBMIT_ID_LABEL}="{submit_id}"'

        def already_created(_: BaseException) -> Any:
            try:
                found = self.list(parent, filter=label)
            except CloudUnreachable:
                return None  # the next attempt (or the last error) says more
            return found[0] if found else None

        try:
            return self.backoff.call(attempt, before_retry=already_created)
        except exceptions.ResourceExhausted as exc:  # capacity or quota (a rate limit was retried, and ran out)
            kind = classify("vertex", str(exc), [getattr(exc, "reason", None) or ""])
            if kind == "rate":
                raise _create_unreachable(exc, parent, label) from exc
            raise NoCapacity(
                f"Vertex AI has no {kind or 'quota'} for the job: {first_line(exc)}",
                "add a fallback: entry, request more quota, or pick another region or machine",
            ) from exc
        except (exceptions.ServiceUnavailable, exceptions.DeadlineExceeded) as exc:
            raise _create_unreachable(exc, parent, label) from exc
        except exceptions.GoogleAPICallError as exc:
            raise _refused(f"Vertex AI refused to create the job: {first_line(exc)}", exc) from exc

    def _call(self, fn: Callable[[], T], what: str) -> T:
        from google.api_core import exceptions

        try:
            return self.backoff.call(fn)
        except exceptions.NotFound as exc:
            hint = "check the job id, --region and --project"
            raise CloudSetupError(f"no such Vertex AI job or location: {what}", hint) from exc
        except (exceptions.ServiceUnavailable, exceptions.DeadlineExceeded, exceptions.ResourceExhausted) as exc:
            raise _unreachable(exc, what) from exc
        except exceptions.GoogleAPICallError as exc:
            raise _refused(f"Vertex AI call failed for {what}: {first_line(exc)}", exc) from exc


def _unreachable(exc: Any, what: str) -> CloudUnreachable:
    return CloudUnreachable(
        f"Vertex AI did not answer for {what} ({first_line(exc)}), retries included",
        "try again later; a job that was created keeps running",
    )


def _create_unreachable(exc: Any, parent: str, label: str) -> CloudUnreachable:
    """A create whose retries ran out: the job may exist all the same (an answer can be lost)."""
    region = parent.split("/")[3]
    return CloudUnreachable(
        f"creating the Vertex AI job: the service kept answering {first_line(exc)}, retries included",
        f"the job may have been created; look for it: cloudtrain list --backend vertex "
        f"--region {region} (its label {label[7:]})",
    )


def _refused(message: str, exc: Any) -> BackendError:
    """A permission problem is the user's to fix (exit 2); anything else is the job's failure."""
    if getattr(exc, "code", None) in (401, 403):
        return CloudSetupError(message, _hint(exc))
    return BackendError(message, _hint(exc))


def _hint(exc: Any) -> str | None:
    if getattr(exc, "code", None) in (401, 403):
        return "the account needs roles/aiplatform.user on the project (and the Vertex AI API enabled)"
    return None
