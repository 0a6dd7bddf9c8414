"""A SageMaker training job: its state through one table, its logs, wait and stop."""

from __future__ import annotations

import io
import tarfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from cloudtrain.backends.base import HandleDefaults, JobState, JobStatus, LogLine
from cloudtrain.backends.files import BucketFolder, Folder, JobFiles
from cloudtrain.backends.outputs import model_warning
from cloudtrain.data.stores import S3Store
from cloudtrain.errors import CloudSetupError
from cloudtrain.secrets.masking import secret_values

from .aws import AwsClients, error_code, translated
from .live_tail import session_opener
from .logs import LOG_GROUP, LogTailer
from .phases import SAGEMAKER_PHASES, sagemaker_marks, sagemaker_transitions

if TYPE_CHECKING:  # the uploads load only when a submit stages a source dir
    from .upload import Uploaded

#: TrainingJobStatus → JobState.
STATES: Mapping[str, JobState] = {
    "InProgress": JobState.RUNNING,
    "Stopping": JobState.STOPPING,
    "Completed": JobState.SUCCEEDED,
    "Failed": JobState.FAILED,
    "Stopped": JobState.CANCELLED,
}
#: (TrainingJobStatus, SecondaryStatus) pairs that say more: code not yet running, "Stopped" by SageMaker's limits.
SECONDARY_STATES: Mapping[tuple[str, str], JobState] = {
    **{
        ("InProgress", s): JobState.PENDING
        for s in (
            "Starting",
            "Pending",
            "LaunchingMLInstances",
            "PreparingTrainingStack",
            "Downloading",
            "DownloadingTrainingImage",
        )
    },
    ("Stopped", "MaxRuntimeExceeded"): JobState.TIMED_OUT,
    ("Stopped", "MaxWaitTimeExceeded"): JobState.TIMED_OUT,
}
_LIMIT_MESSAGES = {
    "MaxRuntimeExceeded": "stopped by SageMaker: the job ran longer than max_runtime ({} s)",
    "MaxWaitTimeExceeded": "stopped by SageMaker: spot capacity plus training took longer than spot.max_wait ({} s)",
}


def job_state(status: str, secondary: str | None = None) -> JobState:
    return SECONDARY_STATES.get((status, secondary or ""), STATES.get(status, JobState.UNKNOWN))


def console_url(region: str, job_name: str) -> str:
    return f"https://{region}.console.aws.amazon.com/sagemaker/home?region={region}#/jobs/{job_name}"


def to_status(desc: Mapping[str, Any], region: str) -> JobStatus:
    """A ``DescribeTrainingJob`` response (or a ``TrainingJobSummary``) as a :class:`JobStatus`."""
    name = desc["TrainingJobName"]
    status, secondary = desc["TrainingJobStatus"], desc.get("SecondaryStatus")
    message = desc.get("FailureReason") or None
    if message is None and secondary in _LIMIT_MESSAGES:
        stopping = desc.get("StoppingCondition", {})
        limit = stopping.get("MaxRuntimeInSeconds" if secondary == "MaxRuntimeExceeded" else "MaxWaitTimeInSeconds")
        message = _LIMIT_MESSAGES[secondary].format(limit if limit is not None else "?")
    state = job_state(status, secondary)
    resources = desc.get("ResourceConfig", {})
    details = _details(desc, region)
    return JobStatus(
        job_id=name,
        name=desc.get("TrainingJobArn", name),
        state=state,
        native_state=status,
        message=message,
        console_url=console_url(region, name),
        created=desc.get("CreationTime"),
        ended=desc.get("TrainingEndTime"),
        details=details,
        # before its code runs, the secondary status says where it is: Pending, DownloadingTrainingImage, …
        phase=SAGEMAKER_PHASES.get(secondary or "") if state is JobState.PENDING else None,
        machine_type=resources.get("InstanceType") if resources else None,
        replica_count=resources.get("InstanceCount", 1) if resources else None,
        phase_marks=sagemaker_marks(desc) if desc.get("SecondaryStatusTransitions") else None,
        billable_seconds=details.get("billable_seconds"),
        interruptions=details.get("spot_interruptions"),
        checkpoint_dir=details.get("checkpoint_dir"),
        secret_values=secret_values(desc.get("Environment") or {}, (), desc.get("HyperParameters") or {}),
    )


def _details(desc: Mapping[str, Any], region: str) -> dict[str, Any]:
    resources = desc.get("ResourceConfig", {})
    count = resources.get("InstanceCount", 1)
    details: dict[str, Any] = {"region": region}
    if desc.get("SecondaryStatus"):
        details["secondary_status"] = desc["SecondaryStatus"]
    if resources:
        details["instance_type"] = resources.get("InstanceType")
        details["instance_count"] = count
    # Per instance in the response; times the count is what is billed (as the SDK prints it).
    training, billable = desc.get("TrainingTimeInSeconds"), desc.get("BillableTimeInSeconds")
    if training is not None:
        details["training_seconds"] = training * count
    if billable is not None:
        details["billable_seconds"] = billable * count
    if desc.get("EnableManagedSpotTraining") and training and billable is not None:
        details["spot_savings_percent"] = round((1 - billable / training) * 100, 1)
    if desc.get("SecondaryStatusTransitions"):  # the run's phases (cloudtrain.following.timeline)
        details["phase_marks"] = {k: v.isoformat() for k, v in sagemaker_marks(desc).items()}

        if interrupted := sagemaker_transitions(desc["SecondaryStatusTransitions"]):  # managed spot lost its machines
            details["spot_interruptions"] = interrupted
    if desc.get("ModelArtifacts", {}).get("S3ModelArtifacts"):
        details["model_artifacts"] = desc["ModelArtifacts"]["S3ModelArtifacts"]
    if desc.get("CheckpointConfig", {}).get("S3Uri"):  # what `submit --resume` continues
        details["checkpoint_dir"] = desc["CheckpointConfig"]["S3Uri"]
    return details


def _not_found(message: str) -> bool:
    message = message.lower()  # AWS: "Requested resource not found."; moto: "Could not find training job"
    return "not found" in message or "could not find" in message


class SageMakerJob(HandleDefaults):
    """The :class:`~cloudtrain.backends.base.JobHandle` of one training job."""

    backend_name = "sagemaker"

    def __init__(
        self,
        job_id: str,
        clients: AwsClients,
        *,
        poll_seconds: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        tailer_options: Mapping[str, Any] | None = None,
    ):
        self.job_id = job_id
        self.clients = clients
        self.region = clients.region
        self.poll_seconds = poll_seconds
        self.sleep = sleep
        self.clock = clock
        self.tailer_options = dict(tailer_options or {})
        self.last: JobStatus | None = None
        self.uploaded: Uploaded | None = None  # the source dir its submit staged (set by the backend)
        self._instances = 1
        self.tailer: LogTailer | None = None  # the last one logs() used; its call counts for the bench

    @property
    def location(self) -> Mapping[str, str]:
        return {"region": self.region}

    def model_outputs_warning(self, status: JobStatus) -> str | None:
        """After success: a warning when ``model.tar.gz`` (what SM_MODEL_DIR held) has no files."""
        uri = str(status.details.get("model_artifacts") or "")
        if not uri.startswith("s3://"):
            return None
        bucket, _, key = uri[5:].partition("/")
        if _tar_files(self.clients.s3, bucket, key) != 0:  # files, or nothing there to judge
            return None
        written: Counter[str] = Counter()
        output = key.rsplit("/", 1)[0] + "/output.tar.gz"
        if n := _tar_files(self.clients.s3, bucket, output):
            written[f"s3://{bucket}/{output} (SM_OUTPUT_DATA_DIR)"] = n
        return model_warning(uri, written, "sagemaker")

    def files(self) -> JobFiles:
        """``<S3OutputPath>/<job>/`` (``output/model.tar.gz``, ``output/output.tar.gz``), the checkpoint
        prefix, and the event files where ``TensorBoardOutputConfig`` has SageMaker upload them."""
        desc = self.describe()
        status = to_status(desc, self.region)
        outputs: dict[str, Folder] = {}
        job = ""
        if path := desc.get("OutputDataConfig", {}).get("S3OutputPath"):
            job = f"{path.rstrip('/')}/{self.job_id}/"
            outputs["output"] = self._folder(job)
        path = desc.get("CheckpointConfig", {}).get("S3Uri")
        if path and not (job and path.startswith(job)):  # a prefix of its own, not inside the job's folder
            outputs["checkpoints"] = self._folder(path)
        board = desc.get("TensorBoardOutputConfig", {}).get("S3OutputPath")
        return JobFiles(
            outputs,
            self._folder(board) if board else None,
            no_tensorboard=None
            if board
            else f"job {self.job_id} uploads no event files (its request has no TensorBoardOutputConfig): "
            "set tensorboard: true in its config",
            running=not status.state.terminal,
        )

    def _folder(self, uri: str) -> BucketFolder:
        bucket, _, prefix = uri.removeprefix("s3://").partition("/")
        return BucketFolder(S3Store(self.clients.s3, bucket, translated), prefix)

    def describe(self) -> dict[str, Any]:
        with translated(f"describing training job {self.job_id}"):
            try:
                job: dict[str, Any] = self.clients.sagemaker.describe_training_job(TrainingJobName=self.job_id)
                return job
            except Exception as exc:
                if error_code(exc) == "ValidationException" and _not_found(str(exc)):
                    raise CloudSetupError(
                        f"no SageMaker training job {self.job_id!r} in {self.region}",
                        hint="check the name and --region (cloudtrain list --backend sagemaker)",
                    ) from None
                raise

    def status(self) -> JobStatus:
        desc = self.describe()
        self._instances = desc.get("ResourceConfig", {}).get("InstanceCount", 1)
        self.last = to_status(desc, self.region)
        return self.last

    def logs(self, follow: bool = False, drain: float | None = None) -> Iterator[LogLine]:
        if self.last is None:
            self.status()
        options = {"sleep": self.sleep, "clock": self.clock, **self.tailer_options}
        if follow and options.pop("live_tail", True):  # built here: boto3 clients are not made on threads
            options["open_tail"] = session_opener(
                self.clients.logs, self.clients.logs_tail, LOG_GROUP, f"{self.job_id}/"
            )
        options.pop("live_tail", None)
        self.tailer = LogTailer(
            self.clients.logs,
            self.job_id,
            job_done=lambda: self.status().state.terminal,
            instance_count=self._instances,
            **options,
        )
        return self.tailer.follow() if follow else self.tailer.read()

    def wait(self) -> JobStatus:
        while not (status := self.status()).state.terminal:
            self.sleep(self.poll_seconds)
        return status

    def cancel(self) -> JobStatus:
        """StopTrainingJob, unless the job is already over; the status right after."""
        status = self.status()
        if status.state.terminal or status.state is JobState.STOPPING:
            return status
        with translated(f"stopping training job {self.job_id}"):
            self.clients.sagemaker.stop_training_job(TrainingJobName=self.job_id)
        return self.status()


def list_jobs(clients: AwsClients, limit: int) -> list[JobStatus]:
    """The newest ``limit`` training jobs of the region, newest first."""
    found: list[JobStatus] = []
    token = None
    with translated("listing training jobs"):
        while len(found) < limit:
            kwargs: dict[str, Any] = {
                "SortBy": "CreationTime",
                "SortOrder": "Descending",
                "MaxResults": min(100, limit - len(found)),
            }
            if token:
                kwargs["NextToken"] = token
            page = clients.sagemaker.list_training_jobs(**kwargs)
            found += [to_status(s, clients.region) for s in page.get("TrainingJobSummaries", [])]
            token = page.get("NextToken")
            if not token:
                break
    return found[:limit]


def _tar_files(s3: Any, bucket: str, key: str, *, read_limit: int = 2**20) -> int | None:
    """Files in the ``.tar.gz`` at ``s3://bucket/key`` (one above ``read_limit`` bytes: 1, unread); None if it is
    missing or unreadable."""
    try:
        size = s3.head_object(Bucket=bucket, Key=key)["ContentLength"]
        if size > read_limit:
            return 1
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
            return sum(1 for m in tar.getmembers() if m.isfile())
    except Exception:  # a listing is advice: never fail a finished job over it
        return None
