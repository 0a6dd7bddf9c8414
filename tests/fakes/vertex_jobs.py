"""A fake ``google.cloud.aiplatform.v1.JobService``: Create / Get / Cancel / ListCustomJobs, and
Create / Get / CancelHyperparameterTuningJob (whose trials a test scripts in ``tuning_trials``).

Scriptable: each created job takes the next :class:`Script` (states it walks through, one
per GetCustomJob, the last one sticking; or a timeline on the virtual clock; an error for
FAILED), and ``create_faults`` makes creates fail (``"lost"``: the job is created but the
caller sees UNAVAILABLE, as when a response is lost).
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from dataclasses import dataclass, field
from typing import TypeVar

import grpc
from google.cloud.aiplatform_v1.types import custom_job, job_service, study
from google.cloud.aiplatform_v1.types import hyperparameter_tuning_job as hptj
from google.cloud.aiplatform_v1.types import job_state as js
from google.protobuf import empty_pb2

from tests.fakes import Clock, VirtualClock, serve, unary

SERVICE = "google.cloud.aiplatform.v1.JobService"

#: Refusals of CreateCustomJob as Vertex AI words them: (code, message, ErrorInfo reason or None).
REFUSALS = {
    "capacity": (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "The zone 'asia-east1-a' does not have enough resources "
        "available to fulfill the request.  '(resource type:compute)'.",
        "ZONE_RESOURCE_POOL_EXHAUSTED",
    ),
    "quota": (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "The following quota metrics exceed quota limits: "
        "aiplatform.googleapis.com/custom_model_training_nvidia_t4_gpus",
        None,
    ),
    "rate": (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "Quota exceeded for quota metric 'Resource management (CRUD) "
        "requests' and limit 'Resource management (CRUD) requests per minute per region'",
        "RATE_LIMIT_EXCEEDED",
    ),
}
#: A job that fails while it starts for lack of machines, as Vertex AI words it (google.rpc.Code 8).
NO_RESOURCES_ERROR = "Resources are insufficient in region: asia-east1. Please try a different region."


def abort_with(context, code, message: str, reason: str | None) -> None:
    """Abort the call the way Google's APIs do: a status, and an ErrorInfo detail when there is a reason."""
    if reason is None:
        context.abort(code, message)
    from google.protobuf import any_pb2
    from google.rpc import error_details_pb2, status_pb2
    from grpc_status import rpc_status

    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="aiplatform.googleapis.com"))
    context.abort_with_status(
        rpc_status.to_status(status_pb2.Status(code=code.value[0], message=message, details=[detail]))
    )


S = js.JobState
E = TypeVar("E")


def member(enum: type[E], name: str) -> E:
    """``enum``'s member ``name``, typed as the enum: to mypy the members of a proto-plus enum are
    plain ints (proto ships no types), which the messages' typed fields refuse."""
    return getattr(enum, name)


@dataclass
class Script:
    states: list[str] = field(default_factory=lambda: ["PENDING", "RUNNING", "SUCCEEDED"])
    timeline: list[tuple[float, str]] | None = None  # (seconds after create, state) on the clock
    error: str = "The replica workerpool0-0 exited with a non-zero status of 1."
    error_code: int | None = None  # google.rpc.Code of a FAILED job's error; None: 8 for NO_RESOURCES, else 3
    cancel_gets: int = 2  # gets in CANCELLING before CANCELLED


class FakeJobService:
    def __init__(self, clock: Clock | None = None):
        self.clock: Clock = clock or VirtualClock()
        self.jobs: dict[str, custom_job.CustomJob] = {}
        self.scripts: list[Script] = []  # taken by creates, in order; default Script() after
        #: One per create call: "lost", "unavailable", or a refusal of :data:`REFUSALS` ("capacity", …).
        self.create_faults: list[str] = []
        self.calls: list[str] = []
        self._run: dict[str, dict] = {}
        self._lock = threading.Lock()
        self.tuning_jobs: dict[str, hptj.HyperparameterTuningJob] = {}
        #: Trials every tuning job reports once it runs: (parameters, final metric value or None = infeasible).
        self.tuning_trials: list[tuple[dict, float | None]] = []
        job, js_ = custom_job.CustomJob.serialize, job_service
        tuning = hptj.HyperparameterTuningJob.serialize
        self.server, self.address = serve(
            SERVICE,
            {
                "CreateCustomJob": unary(self._create, js_.CreateCustomJobRequest, job),
                "GetCustomJob": unary(self._get, js_.GetCustomJobRequest, job),
                "CancelCustomJob": unary(self._cancel, js_.CancelCustomJobRequest, empty_pb2.Empty.SerializeToString),
                "ListCustomJobs": unary(self._list, js_.ListCustomJobsRequest, js_.ListCustomJobsResponse.serialize),
                "CreateHyperparameterTuningJob": unary(
                    self._create_tuning, js_.CreateHyperparameterTuningJobRequest, tuning
                ),
                "GetHyperparameterTuningJob": unary(self._get_tuning, js_.GetHyperparameterTuningJobRequest, tuning),
                "CancelHyperparameterTuningJob": unary(
                    self._cancel_tuning, js_.CancelHyperparameterTuningJobRequest, empty_pb2.Empty.SerializeToString
                ),
            },
        )

    def stop(self) -> None:
        self.server.stop(grace=None)

    def _now(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.clock.time(), dt.timezone.utc)

    def _create(self, req, context):
        with self._lock:
            self.calls.append("create")
            fault = self.create_faults.pop(0) if self.create_faults else None
            if fault == "unavailable":
                context.abort(grpc.StatusCode.UNAVAILABLE, "fake: connection reset")
            if fault in REFUSALS:
                abort_with(context, *REFUSALS[fault])
            job_id = str(1000 + len(self.jobs))
            job = custom_job.CustomJob(req.custom_job)
            job.name = f"{req.parent}/customJobs/{job_id}"
            job.state = member(S, "JOB_STATE_PENDING")
            job.create_time = self._now()
            self.jobs[job_id] = job
            script = self.scripts.pop(0) if self.scripts else Script()
            self._run[job_id] = {"script": script, "gets": 0, "cancel": None, "created": self.clock.time()}
            if fault == "lost":
                context.abort(grpc.StatusCode.UNAVAILABLE, "fake: response lost after the job was created")
            return job

    def start(self, script: Script, parent: str = "projects/p/locations/us-central1") -> str:
        """A job created as CreateCustomJob would, running ``script``; returns its id (no RPC)."""
        from google.cloud.aiplatform_v1.types import CustomJob

        self.scripts.append(script)
        context = type("Context", (), {"abort": lambda *a: None})()
        created = self._create(
            type("Request", (), {"parent": parent, "custom_job": CustomJob(display_name="t")})(), context
        )
        return created.name.rsplit("/", 1)[1]

    def _get(self, req, context):
        with self._lock:
            self.calls.append("get")
            job = self._find(req.name, context)
            self._advance(job)
            return job

    def _advance(self, job) -> None:
        run = self._run[job.name.rsplit("/", 1)[1]]
        script: Script = run["script"]
        if run["cancel"] is not None:
            run["cancel"] += 1
            state = "CANCELLING" if run["cancel"] <= script.cancel_gets else "CANCELLED"
        elif script.timeline is not None:
            age = self.clock.time() - run["created"]
            state = [s for t, s in script.timeline if t <= age][-1]
        else:
            state = script.states[min(run["gets"], len(script.states) - 1)]
            run["gets"] += 1
        if state == "RUNNING" and not job.start_time:
            job.start_time = self._now()
        if state in ("SUCCEEDED", "FAILED", "CANCELLED") and not job.end_time:
            job.end_time = self._now()
        if state == "FAILED":
            code = (
                script.error_code if script.error_code is not None else 8 if script.error == NO_RESOURCES_ERROR else 3
            )
            job.error = {"code": code, "message": script.error}
        if state == "CANCELLED":
            job.error = {"code": 1, "message": "CANCELED"}
        job.state = member(S, f"JOB_STATE_{state}")

    def _cancel(self, req, context):
        with self._lock:
            self.calls.append("cancel")
            job = self._find(req.name, context)
            if job.state in (S.JOB_STATE_SUCCEEDED, S.JOB_STATE_FAILED, S.JOB_STATE_CANCELLED):
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "fake: job already ended")
            run = self._run[job.name.rsplit("/", 1)[1]]
            run["cancel"] = 0 if run["cancel"] is None else run["cancel"]
            return empty_pb2.Empty()

    def _list(self, req, context):
        with self._lock:
            self.calls.append("list")
            match = re.fullmatch(r'labels\.([\w-]+)="([^"]*)"', req.filter) if req.filter else None
            wanted = (
                (lambda j: True)
                if not req.filter
                else (lambda j: match is not None and j.labels.get(match[1]) == match[2])
            )
            jobs = [j for j in reversed(self.jobs.values()) if wanted(j)]  # newest first, as Vertex AI lists them
            start = int(req.page_token or 0)
            size = req.page_size or 100
            page = jobs[start : start + size]
            token = str(start + size) if start + size < len(jobs) else ""
            return job_service.ListCustomJobsResponse(custom_jobs=page, next_page_token=token)

    def _find(self, name, context):
        job = self.jobs.get(name.rsplit("/", 1)[-1])
        if job is None or job.name != name:
            context.abort(grpc.StatusCode.NOT_FOUND, f"fake: {name} not found")
        return job

    # -- hyperparameter tuning jobs: PENDING, then RUNNING with the scripted trials, then SUCCEEDED

    def _create_tuning(self, req, context):
        with self._lock:
            self.calls.append("create_tuning")
            job_id = str(5000 + len(self.tuning_jobs))
            job = hptj.HyperparameterTuningJob(req.hyperparameter_tuning_job)
            job.name = f"{req.parent}/hyperparameterTuningJobs/{job_id}"
            job.state = member(S, "JOB_STATE_PENDING")
            job.create_time = self._now()
            self.tuning_jobs[job_id] = job
            return job

    def _get_tuning(self, req, context):
        with self._lock:
            self.calls.append("get_tuning")
            job = self.tuning_jobs.get(req.name.rsplit("/", 1)[-1])
            if job is None or job.name != req.name:
                context.abort(grpc.StatusCode.NOT_FOUND, f"fake: {req.name} not found")
            assert job is not None  # context.abort raised
            if job.state == S.JOB_STATE_PENDING:
                job.state = member(S, "JOB_STATE_RUNNING")
                job.start_time = self._now()
            elif job.state == S.JOB_STATE_RUNNING:
                metric = job.study_spec.metrics[0].metric_id
                for i, (params, value) in enumerate(self.tuning_trials[: job.max_trial_count]):
                    trial = study.Trial(id=str(i + 1), custom_job=f"{job.name.split('/hyper')[0]}/customJobs/{900 + i}")
                    trial.parameters = [study.Trial.Parameter(parameter_id=k, value=v) for k, v in params.items()]
                    if value is None:
                        trial.state, trial.infeasible_reason = (
                            member(study.Trial.State, "INFEASIBLE"),
                            "trial job failed",
                        )
                    else:
                        trial.state = member(study.Trial.State, "SUCCEEDED")
                        trial.final_measurement = study.Measurement(metrics=[{"metric_id": metric, "value": value}])
                    job.trials.append(trial)
                job.state = member(S, "JOB_STATE_SUCCEEDED")
                job.end_time = self._now()
            return job

    def _cancel_tuning(self, req, context):
        with self._lock:
            self.calls.append("cancel_tuning")
            job = self.tuning_jobs.get(req.name.rsplit("/", 1)[-1])
            if job is None:
                context.abort(grpc.StatusCode.NOT_FOUND, f"fake: {req.name} not found")
            assert job is not None  # context.abort raised
            job.state = member(S, "JOB_STATE_CANCELLED")
            return empty_pb2.Empty()
