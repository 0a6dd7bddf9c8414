"""The handle of one Vertex AI CustomJob: status, logs, files, wait, cancel. The backend makes one where a job is
created or attached (:mod:`.live`); ``--help`` and ``--dry-run`` never load it, nor the API client, the
bucket store and the log follower it uses."""

from __future__ import annotations

import datetime as dt
import posixpath
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from cloudtrain.backends.base import HandleDefaults, JobStatus, LogLine
from cloudtrain.backends.files import BucketFolder, JobFiles
from cloudtrain.backends.outputs import model_warning
from cloudtrain.backends.vertex import request
from cloudtrain.backends.vertex.jobs import to_status
from cloudtrain.backends.vertex.logs import LogTailer, TailPolicy
from cloudtrain.backends.vertex.upload import split_gs
from cloudtrain.data.stores import GcsStore

Clock = Callable[[], float]
Sleep = Callable[[float], None]


class VertexJob(HandleDefaults):
    """A handle on one CustomJob: status, logs, wait, cancel."""

    backend_name = "vertex"

    def __init__(
        self,
        service: Any,
        name: str,
        *,
        reader: Callable[[], Any],
        policy: TailPolicy,
        clock: Clock = time.time,
        sleep: Sleep = time.sleep,
        wait: Callable[[Any, float], bool] | None = None,
        wait_interval: tuple[float, float] = (2.0, 15.0),
        storage: Callable[[], Any] | None = None,
    ):
        parts = request.split_job_name(name)
        assert parts, name  # built by this module from a validated name
        self.project, self.region, self.job_id = parts
        self.name = name
        self.console_url = request.console_url(self.project, self.region, self.job_id)
        self.service, self._reader, self.policy = service, reader, policy
        self.clock, self.sleep, self.wait_interval, self._wait = clock, sleep, wait_interval, wait
        self.tailer: LogTailer | None = None  # the last one logs() used, for its counters
        self._storage = storage  # a google-cloud-storage client factory, for the outputs check

    @property
    def location(self) -> Mapping[str, str]:
        return {"project": self.project, "region": self.region}

    def model_outputs_warning(self, status: JobStatus) -> str | None:
        """After success: a warning when ``<base output dir>/model/`` (AIP_MODEL_DIR) holds nothing."""
        base = str(status.details.get("output_dir") or "")
        if not base.startswith("gs://") or self._storage is None:
            return None
        bucket, prefix = split_gs(base.rstrip("/") + "/")
        written: Counter[str] = Counter()
        try:
            client = self._storage()
            if any(True for _ in client.list_blobs(bucket, prefix=prefix + "model/", max_results=1)):
                return None
            for blob in client.list_blobs(bucket, prefix=prefix, max_results=1000):
                written[f"gs://{bucket}/{posixpath.dirname(blob.name)}/"] += 1
        except Exception:  # a listing is advice: never fail a finished job over it (no permission, …)
            return None
        return model_warning(f"gs://{bucket}/{prefix}model/", written, "vertex")

    def status(self) -> JobStatus:
        return to_status(self.service.get(self.name))

    def files(self) -> JobFiles:
        """The base output directory (``model/``, ``checkpoints/``, ``logs/``: AIP_TENSORBOARD_LOG_DIR, and
        anything else the job wrote there), read through the Cloud Storage client."""
        status = self.status()
        base = str(status.details.get("output_dir") or "")
        if not base.startswith("gs://") or self._storage is None:
            return JobFiles({}, gone=f"job {self.job_id} has no gs:// base output directory")
        bucket, prefix = split_gs(base.rstrip("/") + "/")
        store = GcsStore(self._storage(), bucket)
        return JobFiles(
            {"output": BucketFolder(store, prefix)},
            BucketFolder(store, prefix + "logs/"),
            running=not status.state.terminal,
        )

    def logs(self, follow: bool = False, drain: float | None = None) -> Iterator[LogLine]:
        """Lines in order per replica (late ones marked); with ``follow``, ends by the stop rule
        (``drain`` quiet seconds after the end; None: the policy's default)."""
        first = self.status()
        created = first.created or dt.datetime.fromtimestamp(self.clock(), dt.timezone.utc)
        statuses = iter([first])  # the tailer's first state check reuses this one

        def job_status() -> JobStatus:
            return next(statuses, None) or self.status()

        reader = self._reader()
        self.tailer = LogTailer(
            reader,
            self.job_id,
            start=created - dt.timedelta(minutes=1),  # slack for clock skew between VM and API
            job_status=job_status,
            open_tail=getattr(reader, "tail", None),
            policy=self.policy,
            clock=self.clock,
            sleep=self.sleep,
            wait=self._wait,
        )
        yield from (self.tailer.follow(drain) if follow else self.tailer.read_all())

    @property
    def stop_note(self) -> str | None:
        """The straggler hint, when the last follow ended by the stop rule."""
        return self.tailer.stop_note if self.tailer else None

    def wait(self) -> JobStatus:
        delay, cap = self.wait_interval
        while True:
            status = self.status()
            if status.state.terminal:
                return status
            self.sleep(delay)
            delay = min(delay * 1.5, cap)

    def cancel(self) -> JobStatus:
        self.service.cancel(self.name)
        return self.status()
