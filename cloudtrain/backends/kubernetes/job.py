"""A handle on one cloudtrain job in a cluster: its state from the workload and its pods, every pod's lines
once, cancel by foreground deletion.

Lines: one reader per pod follows its log (``timestamps=True``); when the stream ends while the pod still
runs (an API server restart, a dropped connection) it reconnects and skips what it has already given, by
timestamp and the count of lines at the last one. A replaced pod (deleted, preempted) is a pod of its own,
labelled ``<replica>#<n>``. Every line shows the job's secret values (its Secret's: known at submit, read from
the API when reattached) as ``***``, each pod's lines one masking stream.
"""

from __future__ import annotations

import base64
import datetime as dt
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from cloudtrain import history
from cloudtrain.backends.base import HandleDefaults, JobState, JobStatus, LogLine
from cloudtrain.backends.kubernetes import states
from cloudtrain.backends.kubernetes.api import Cluster, reason, refusal
from cloudtrain.backends.kubernetes.manifests import RUN_LABEL, pod_facts
from cloudtrain.errors import BackendError, UsageError
from cloudtrain.secrets.masking import ValueMasker

JOBSET = ("jobset.x-k8s.io", "v1alpha2", "jobsets")
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
POLL_S = 1.0
LAST_LINES = 5
#: How long a follower waits out an API server that does not answer (a control-plane upgrade, a restart).
OUTAGE_S = 300.0


def replica_name(index: int) -> str:
    """The contract's name of replica ``index`` (Vertex's: the chief, then the workers)."""
    return "chief" if index == 0 else f"worker-{index - 1}"


def pod_index(pod: dict[str, Any]) -> int:
    """A pod's replica index (its Job's completion index)."""
    return int((pod["metadata"].get("annotations") or {}).get(INDEX_ANNOTATION, 0))


def stamp_key(stamp: str) -> str:
    """An RFC 3339 timestamp as a key that sorts as time does (the fraction padded to nanoseconds)."""
    head, _, frac = stamp.rstrip("Z").partition(".")
    return f"{head}.{frac.ljust(9, '0')}"


def parse_stamp(stamp: str) -> dt.datetime:
    head, _, frac = stamp.rstrip("Z").partition(".")
    return dt.datetime.fromisoformat(f"{head}.{frac[:6].ljust(6, '0')}").replace(tzinfo=dt.timezone.utc)


class PodReader:
    """One pod's lines, given once, across reconnects."""

    def __init__(
        self, job: KubernetesJob, pod: str, index: int, replica: str, out: queue.Queue[LogLine | None], follow: bool
    ):
        self.job, self.pod, self.index, self.replica, self.out, self.follow = job, pod, index, replica, out, follow
        self.last, self.at_last = "", 0  # the last line's stamp key, and how many lines carried it
        self.mask: Callable[[str], str] = job.masker().stream()  # a private key's lines masked whole, too
        self.thread = threading.Thread(target=self.run, daemon=True, name=f"logs-{pod}")

    def read(self, follow: bool) -> None:
        stream = self.job.cluster.core.read_namespaced_pod_log(
            self.pod, self.job.namespace, container="train", follow=follow, timestamps=True, _preload_content=False
        )
        seen_here: dict[str, int] = {}
        buffer = b""
        try:
            for chunk in stream.stream(65536):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for raw in lines:
                    self.give(raw, seen_here)
            if buffer:
                self.give(buffer, seen_here)
        finally:
            stream.release_conn()

    def give(self, raw: bytes, seen_here: dict[str, int]) -> None:
        stamp, _, text = raw.decode("utf-8", errors="replace").partition(" ")
        key = stamp_key(stamp)
        seen_here[key] = seen_here.get(key, 0) + 1
        if key < self.last or (key == self.last and seen_here[key] <= self.at_last):
            return  # given before the reconnect
        if key == self.last:
            self.at_last += 1
        else:
            self.last, self.at_last = key, 1
        self.out.put(LogLine(parse_stamp(stamp), self.replica, self.mask(text)))

    def run(self) -> None:
        follow = self.follow
        while True:
            try:
                self.read(follow)
            except Exception as err:  # not started yet, gone, or the connection dropped
                status = getattr(err, "status", None)
                if status == 404 or not self.follow:
                    return
                if status != 400:  # 400: its container is still being created
                    time.sleep(POLL_S)
            if not self.follow:
                return
            phase = self.job.pod_phase(self.pod)
            if phase is None:
                return
            if phase in ("Succeeded", "Failed"):
                if follow:  # once more, without following: what came after the stream ended
                    follow = False
                    continue
                return
            time.sleep(POLL_S / 2)


class KubernetesJob(HandleDefaults):
    backend_name = "kubernetes"

    def __init__(
        self,
        cluster: Cluster,
        namespace: str,
        name: str,
        kind: str,
        region: str,
        secret_values: Iterable[str] | None = None,
    ) -> None:
        self.cluster, self.namespace, self.job_id, self.kind, self.region = cluster, namespace, name, kind, region
        self._cancelled = self._seen = False
        #: The values of the job's Secret (None: not known yet, read from the API when first needed).
        self._secrets = list(secret_values) if secret_values is not None else None
        self._masker: ValueMasker | None = None

    @property
    def location(self) -> Mapping[str, str]:
        return {"region": self.region, "project": self.namespace}

    # -- reads -------------------------------------------------------------------------------------

    def _serialize(self, obj: Any) -> Any:
        return self.cluster.api_client.sanitize_for_serialization(obj)

    def workload(self) -> dict[str, Any] | None:
        """The Job's or JobSet's object as the API gives it; None: it is gone."""
        try:
            if self.kind == "JobSet":
                found: dict[str, Any] = self.cluster.custom.get_namespaced_custom_object(
                    JOBSET[0], JOBSET[1], self.namespace, JOBSET[2], self.job_id
                )
                return found
            return dict(self._serialize(self.cluster.batch.read_namespaced_job(self.job_id, self.namespace)))
        except Exception as err:
            if getattr(err, "status", None) == 404:
                return None
            raise refusal(err, f"read the {self.kind} {self.job_id} in {self.namespace}") from err

    def secret_values(self, workload: dict[str, Any] | None = None) -> list[str]:
        """The values of the job's Secret: those given at submit, else read once from the API (where the pods
        refer to it: a job without secrets needs no ``get`` on secrets)."""
        if self._secrets is None:
            found = workload if workload is not None else self.workload()
            self._secrets = self._read_secret() if found is not None and refers_to_secret(found) else []
        return self._secrets

    def _read_secret(self) -> list[str]:
        try:
            data = self.cluster.core.read_namespaced_secret(self.job_id, self.namespace).data or {}
        except Exception as err:
            if getattr(err, "status", None) == 404:  # gone with its job
                return []
            raise refusal(err, f"read the Secret {self.job_id} (its values are masked in the job's lines)") from err
        return [base64.b64decode(v).decode("utf-8", errors="replace") for v in data.values()]

    def masker(self) -> ValueMasker:
        """What shows the job's secret values (and every credential of a known format) as ``***``."""
        if self._masker is None:
            self._masker = ValueMasker(self.secret_values())
        return self._masker

    def pods(self) -> list[dict[str, Any]]:
        """The job's pods, oldest first."""
        try:
            found = self.cluster.core.list_namespaced_pod(self.namespace, label_selector=f"{RUN_LABEL}={self.job_id}")
        except Exception as err:
            raise refusal(err, f"list the pods of {self.job_id} in {self.namespace}") from err
        pods = [self._serialize(p) for p in found.items]
        return sorted(pods, key=lambda p: (p["metadata"].get("creationTimestamp") or "", p["metadata"]["name"]))

    def pod_phase(self, pod: str) -> str | None:
        try:
            return str(self.cluster.core.read_namespaced_pod(pod, self.namespace).status.phase)
        except Exception as err:
            if getattr(err, "status", None) == 404:
                return None
            return "Unknown"

    def labels(self, pods: list[dict[str, Any]]) -> dict[str, str]:
        """Each pod's replica label: its index's name, ``#2`` on for the pods that replaced it."""
        labels: dict[str, str] = {}
        count: dict[int, int] = {}
        for pod in pods:
            index = pod_index(pod)
            count[index] = count.get(index, 0) + 1
            name = replica_name(index)
            labels[pod["metadata"]["name"]] = name if count[index] == 1 else f"{name}#{count[index]}"
        return labels

    def status(self) -> JobStatus:
        obj = self.workload()
        if obj is None:
            if self._cancelled or self._seen:  # deleted: by our cancel, or by another's while we follow
                return JobStatus(self.job_id, self.full_name, JobState.CANCELLED, "deleted")
            kept = history.ended_record(self.job_id)  # a cancel deletes every object: its end is in history
            if kept is not None:
                ended = dt.datetime.fromisoformat(kept.ended) if kept.ended else None
                return JobStatus(self.job_id, self.full_name, JobState(kept.state), "deleted", ended=ended)
            raise UsageError(
                f"no cloudtrain job {self.job_id} in namespace {self.namespace} of {self.region}",
                "check the job id (cloudtrain list); a deleted job's record is in history only",
            )
        self._seen = True
        meta, status = obj.get("metadata", {}), obj.get("status") or {}
        pods = self.pods()
        created = _time(meta.get("creationTimestamp"))
        facts = pod_facts(obj)  # what its pods run: image, machine, GPUs, replicas
        details: dict[str, Any] = {"kind": self.kind, "context": self.region, "namespace": self.namespace, **facts}
        details["pods"] = len(pods)
        if self.kind == "JobSet":
            details["restarts"] = status.get("restarts", 0)
        else:
            details.update(active=status.get("active", 0), failed=status.get("failed", 0))
        done = states.ended(status.get("conditions") or [])
        common: dict[str, Any] = dict(
            secret_values=self.secret_values(obj),  # the failing replica's last lines show *** for them
            created=created,
            details=details,
            replica_count=facts["replicas"],
            machine_type=facts["machine"],
        )
        if done is not None:
            state, native, message = done
            if state is not JobState.SUCCEEDED:
                message = self.failure(pods) or message
            return JobStatus(
                self.job_id,
                self.full_name,
                state,
                native,
                message,
                ended=_time(status.get("completionTime")) or _now(),
                started=_time(status.get("startTime")),
                **common,
            )
        if meta.get("deletionTimestamp"):
            return JobStatus(self.job_id, self.full_name, JobState.STOPPING, "deleting", **common)
        stuck = self.stuck(pods)
        if stuck:
            return JobStatus(
                self.job_id, self.full_name, JobState.FAILED, "cannot start", stuck, ended=_now(), **common
            )
        running = any((p.get("status") or {}).get("phase") == "Running" for p in pods)
        waiting = None if running else self.waiting_for(pods)
        return JobStatus(
            self.job_id,
            self.full_name,
            JobState.RUNNING if running else JobState.PENDING,
            "Running" if running else "Pending",
            waiting,
            waiting_for=waiting,
            started=_time(status.get("startTime")),
            **common,
        )

    @property
    def full_name(self) -> str:
        return f"{self.region}/{self.namespace}/{self.job_id}"

    def waiting_for(self, pods: list[dict[str, Any]]) -> str | None:
        """Why a pending job waits: the scheduler's word, or its Job's last refusal (quota, admission)."""
        for pod in pods:
            for c in (pod.get("status") or {}).get("conditions") or []:
                if c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("message"):
                    return f"{c.get('reason')}: {c['message']}"
        if not pods:
            return self.refused_create()
        return None

    def refused_create(self) -> str | None:
        """The Job controller's last FailedCreate event (a quota or admission refusal of its pods)."""
        try:
            events = self.cluster.core.list_namespaced_event(self.namespace, field_selector="reason=FailedCreate").items
            events = [e for e in events if e.involved_object.name in (self.job_id, f"{self.job_id}-workers-0")]
        except Exception:
            return None
        return f"FailedCreate: {events[-1].message}" if events else None

    def stuck(self, pods: list[dict[str, Any]]) -> str | None:
        """A pod that cannot start as asked (its image cannot be pulled …), in the kubelet's words."""
        for pod in pods:
            for c in (pod.get("status") or {}).get("containerStatuses") or []:
                waiting = (c.get("state") or {}).get("waiting") or {}
                if waiting.get("reason") in states.STUCK:
                    return f"pod {pod['metadata']['name']}: {waiting['reason']}: {waiting.get('message', '')}".strip()
        return None

    def failure(self, pods: list[dict[str, Any]]) -> str | None:
        """The replica whose exit failed the job, its exit code and its last lines."""
        labels = self.labels(pods)
        failed = []
        for pod in pods:
            for c in (pod.get("status") or {}).get("containerStatuses") or []:
                term = (c.get("state") or {}).get("terminated") or {}
                if term and term.get("exitCode", 0) != 0:
                    failed.append((term.get("exitCode", 0) in (137, 143), term.get("finishedAt") or "", pod, term))
        if not failed:
            return None
        _, _, pod, term = sorted(failed, key=lambda f: (f[0], f[1]))[0]  # a user's exit before a signal
        name = pod["metadata"]["name"]
        try:
            tail = self.cluster.core.read_namespaced_pod_log(
                name, self.namespace, container="train", tail_lines=LAST_LINES
            )
        except Exception as err:
            tail = f"(its lines cannot be read: {reason(err)})"
        last = " | ".join(line for line in str(tail).splitlines() if line.strip())
        node = (pod.get("spec") or {}).get("nodeName", "?")
        return f"replica {labels[name]} (pod {name} on {node}) exited {term.get('exitCode')}; its last lines: {last}"

    # -- lines -------------------------------------------------------------------------------------

    def logs(self, follow: bool = False, drain: float | None = None) -> Iterator[LogLine]:
        out: queue.Queue[LogLine | None] = queue.Queue()
        readers: dict[str, PodReader] = {}
        outage = 0.0  # since when the API has not answered

        def start_readers() -> None:
            for pod in self.pods():
                name = pod["metadata"]["name"]
                if name not in readers and (pod.get("status") or {}).get("phase") != "Pending":
                    index = pod_index(pod)  # a replacement is #2 even when the pod it replaced is gone
                    n = 1 + sum(r.index == index for r in readers.values())
                    label = replica_name(index) if n == 1 else f"{replica_name(index)}#{n}"
                    readers[name] = PodReader(self, name, index, label, out, follow)
                    readers[name].thread.start()

        while True:
            try:
                start_readers()
                terminal = not follow or self.status().state.terminal
            except BackendError:  # the API does not answer: the readers reconnect, and so does this loop
                terminal = False
                if not follow or time.monotonic() - (outage := outage or time.monotonic()) > OUTAGE_S:
                    raise
            else:
                outage = 0.0
            if terminal:
                start_readers()
                for reader in readers.values():
                    reader.thread.join(timeout=30)
            deadline = time.monotonic() + (0 if terminal else POLL_S)
            while True:
                try:
                    line = out.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if line is not None:
                    yield line
            if terminal:
                return

    def wait(self) -> JobStatus:
        while True:
            status = self.status()
            if status.state.terminal:
                return status
            time.sleep(POLL_S)

    def cancel(self) -> JobStatus:
        """Foreground deletion: the workload goes once its pods are gone (their grace period: a checkpoint)."""
        from kubernetes import client  # the SDK: only when a job talks to a cluster

        body = client.V1DeleteOptions(propagation_policy="Foreground")
        self._cancelled = True
        try:
            if self.kind == "JobSet":
                self.cluster.custom.delete_namespaced_custom_object(
                    *JOBSET[:2], self.namespace, JOBSET[2], self.job_id, body=body
                )
            else:
                self.cluster.batch.delete_namespaced_job(self.job_id, self.namespace, body=body)
        except Exception as err:
            if getattr(err, "status", None) != 404:
                raise refusal(err, f"delete the {self.kind} {self.job_id}") from err
        status = self.status()
        if status.state is not JobState.CANCELLED:
            return JobStatus(
                self.job_id,
                self.full_name,
                JobState.CANCELLED,
                "deleting",
                created=status.created,
                details=status.details,
            )
        return status


def refers_to_secret(workload: dict[str, Any]) -> bool:
    """Whether a Job's or JobSet's pods read a Secret (``env.valueFrom.secretKeyRef``)."""
    spec = workload.get("spec") or {}
    if spec.get("replicatedJobs"):
        spec = spec["replicatedJobs"][0]["template"]["spec"]
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    return any("secretKeyRef" in (e.get("valueFrom") or {}) for c in containers for e in c.get("env") or [])


def _time(value: Any) -> dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value
    return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)
