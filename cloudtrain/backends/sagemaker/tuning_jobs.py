"""The handle of one SageMaker hyperparameter tuning job: status, wait, cancel, results."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from cloudtrain.backends.base import HandleDefaults, JobState, JobStatus, LogLine, poll_until_terminal
from cloudtrain.sweeps.results import SweepResults, TrialRow

from .aws import AwsClients, translated

#: HyperParameterTuningJobStatus → JobState.
STATES = {
    "InProgress": JobState.RUNNING,
    "Completed": JobState.SUCCEEDED,
    "Failed": JobState.FAILED,
    "Stopping": JobState.STOPPING,
    "Stopped": JobState.CANCELLED,
    "Deleting": JobState.STOPPING,
    "DeleteFailed": JobState.FAILED,
}
#: A trial's TrainingJobStatus → the results table's state names (as Optuna and Vertex name them).
TRIAL_STATES = {
    "InProgress": "RUNNING",
    "Completed": "COMPLETE",
    "Failed": "FAIL",
    "Stopping": "STOPPING",
    "Stopped": "STOPPED",
}


class SageMakerSweep(HandleDefaults):
    backend_name = "sagemaker"

    def __init__(
        self,
        job_id: str,
        clients: AwsClients,
        *,
        sleep: Callable[[float], None] = time.sleep,
        poll_seconds: float = 30.0,
    ):
        self.job_id, self.clients, self.sleep, self.poll_seconds = job_id, clients, sleep, poll_seconds

    @property
    def location(self) -> dict[str, str]:
        return {"region": self.clients.region}

    def describe(self) -> dict[str, Any]:
        with translated(f"describing tuning job {self.job_id}"):
            job: dict[str, Any] = self.clients.sagemaker.describe_hyper_parameter_tuning_job(
                HyperParameterTuningJobName=self.job_id
            )
            return job

    def status(self) -> JobStatus:
        d = self.describe()
        native = d.get("HyperParameterTuningJobStatus", "")
        counters = d.get("TrainingJobStatusCounters") or {}
        return JobStatus(
            job_id=self.job_id,
            name=d.get("HyperParameterTuningJobArn", self.job_id),
            state=STATES.get(native, JobState.UNKNOWN),
            native_state=native,
            message=d.get("FailureReason"),
            console_url=f"https://{self.clients.region}.console.aws.amazon.com/sagemaker/home?region="
            f"{self.clients.region}#/hyper-tuning-jobs/{self.job_id}",
            created=d.get("CreationTime"),
            ended=d.get("HyperParameterTuningEndTime"),
            details={
                "trials": dict(counters),
                "best_training_job": (d.get("BestTrainingJob") or {}).get("TrainingJobName"),
            },
        )

    def logs(self, follow: bool = False, drain: float | None = None) -> Iterator[LogLine]:
        return iter(())  # each trial is a training job with its own logs: cloudtrain logs TRIAL

    def wait(self) -> JobStatus:
        return poll_until_terminal(self.status, self.sleep, self.poll_seconds)

    def cancel(self) -> JobStatus:
        with translated(f"stopping tuning job {self.job_id}"):
            self.clients.sagemaker.stop_hyper_parameter_tuning_job(HyperParameterTuningJobName=self.job_id)
        return self.status()

    def results(self) -> SweepResults:
        d = self.describe()
        config = d.get("HyperParameterTuningJobConfig") or {}
        objective = config.get("HyperParameterTuningJobObjective") or {}
        rows = []
        with translated(f"listing the trials of tuning job {self.job_id}"):
            pages = self.clients.sagemaker.get_paginator("list_training_jobs_for_hyper_parameter_tuning_job")
            for page in pages.paginate(HyperParameterTuningJobName=self.job_id):
                for s in page.get("TrainingJobSummaries", []):
                    metric = s.get("FinalHyperParameterTuningJobObjectiveMetric") or {}
                    rows.append(
                        TrialRow(
                            s["TrainingJobName"],
                            TRIAL_STATES.get(s.get("TrainingJobStatus", ""), "UNKNOWN"),
                            metric.get("Value"),
                            dict(s.get("TunedHyperParameters") or {}),
                            s["TrainingJobName"],
                            s.get("FailureReason"),
                        )
                    )
        rows.sort(key=lambda r: r.trial)
        limits = config.get("ResourceLimits") or {}
        return SweepResults(
            self.job_id,
            objective.get("MetricName", "?"),
            str(objective.get("Type", "Maximize")).lower(),
            d.get("HyperParameterTuningJobStatus", "?"),
            tuple(rows),
            limits.get("MaxNumberOfTrainingJobs"),
        )
