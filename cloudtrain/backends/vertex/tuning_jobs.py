"""The handle of one Vertex AI HyperparameterTuningJob: status, wait, cancel, results."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from cloudtrain.backends.base import HandleDefaults, JobState, JobStatus, LogLine, poll_until_terminal
from cloudtrain.backends.vertex import request
from cloudtrain.backends.vertex.jobs import STATES
from cloudtrain.sweeps.results import SweepResults, TrialRow

#: Trial.State → the results table's names (as Optuna names them).
TRIAL_STATES = {
    "REQUESTED": "WAITING",
    "ACTIVE": "RUNNING",
    "STOPPING": "STOPPING",
    "SUCCEEDED": "COMPLETE",
    "INFEASIBLE": "FAIL",
}


def tuning_job_message(body: dict[str, Any]) -> Any:
    """The rendered REST JSON → ``aiplatform_v1.HyperparameterTuningJob``; unknown fields are an error."""
    from google.cloud.aiplatform_v1.types import HyperparameterTuningJob

    return HyperparameterTuningJob.from_json(json.dumps(body), ignore_unknown_fields=False)


def tuning_job_name(project: str, region: str, job_id: str) -> str:
    if job_id.startswith("projects/"):
        return job_id
    return f"{request.parent(project, region)}/hyperparameterTuningJobs/{job_id}"


class VertexSweep(HandleDefaults):
    backend_name = "vertex"

    def __init__(
        self, service: Any, name: str, *, sleep: Callable[[float], None] = time.sleep, poll_seconds: float = 30.0
    ):
        self.service, self.name, self.sleep, self.poll_seconds = service, name, sleep, poll_seconds
        self.job_id = name.rsplit("/", 1)[-1]

    @property
    def location(self) -> dict[str, str]:
        _, project, _, region, *_ = self.name.split("/")
        return {"project": project, "region": region}

    @classmethod
    def create(cls, service: Any, parent: str, body: dict[str, Any], **kwargs: Any) -> VertexSweep:
        job = tuning_job_message(body)
        created = service._call(
            lambda: service.client.create_hyperparameter_tuning_job(
                parent=parent, hyperparameter_tuning_job=job, retry=None, timeout=service.timeout
            ),
            parent,
        )
        return cls(service, created.name, **kwargs)

    def _get(self) -> Any:
        return self.service._call(
            lambda: self.service.client.get_hyperparameter_tuning_job(
                name=self.name, retry=None, timeout=self.service.timeout
            ),
            self.name,
        )

    def status(self) -> JobStatus:
        job = self._get()
        native = getattr(job.state, "name", str(job.state))
        counts: dict[str, int] = {}
        for trial in job.trials:
            state = TRIAL_STATES.get(getattr(trial.state, "name", ""), "UNKNOWN")
            counts[state] = counts.get(state, 0) + 1
        project, region, _ = (self.name.split("/") + ["", "", "", "", ""])[1:6:2]
        return JobStatus(
            job_id=self.job_id,
            name=self.name,
            state=STATES.get(native, JobState.UNKNOWN),
            native_state=native,
            message=job.error.message or None,
            console_url=f"https://console.cloud.google.com/vertex-ai/locations/{region}/training/{self.job_id}"
            f"?project={project}",
            created=job.create_time or None,
            ended=job.end_time or None,
            details={"trials": counts, "max_trials": job.max_trial_count},
        )

    def logs(self, follow: bool = False, drain: float | None = None) -> Iterator[LogLine]:
        return iter(())  # each trial is a CustomJob with its own logs

    def wait(self) -> JobStatus:
        return poll_until_terminal(self.status, self.sleep, self.poll_seconds)

    def cancel(self) -> JobStatus:
        self.service._call(
            lambda: self.service.client.cancel_hyperparameter_tuning_job(
                name=self.name, retry=None, timeout=self.service.timeout
            ),
            self.name,
        )
        return self.status()

    def results(self) -> SweepResults:
        job = self._get()
        metric_spec = job.study_spec.metrics[0] if job.study_spec.metrics else None
        rows = []
        for trial in job.trials:
            values = {m.metric_id: m.value for m in trial.final_measurement.metrics}
            value = values.get(metric_spec.metric_id) if metric_spec else None
            params = {p.parameter_id: _plain(p.value) for p in trial.parameters}
            rows.append(
                TrialRow(
                    trial.id,
                    TRIAL_STATES.get(getattr(trial.state, "name", ""), "UNKNOWN"),
                    value,
                    params,
                    trial.custom_job.rsplit("/", 1)[-1] or None,
                    trial.infeasible_reason or None,
                )
            )
        goal = getattr(metric_spec.goal, "name", "MAXIMIZE").lower() if metric_spec else "maximize"
        return SweepResults(
            self.job_id,
            metric_spec.metric_id if metric_spec else "?",
            goal,
            getattr(job.state, "name", "?"),
            tuple(rows),
            job.max_trial_count,
        )


def _plain(value: Any) -> Any:
    """A ``google.protobuf.Value`` (already unwrapped by proto-plus) as int when it is whole."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
