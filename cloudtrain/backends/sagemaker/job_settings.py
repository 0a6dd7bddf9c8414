"""What only a SageMaker job reads of its config: the role it runs as."""

from __future__ import annotations

from dataclasses import dataclass

from cloudtrain.spec import BackendSettings, JobSpec, settings_of


@dataclass(frozen=True)
class SageMakerSettings(BackendSettings):
    role_arn: str | None = None  # the execution role (CreateTrainingJob.RoleArn)


def sagemaker_settings(spec: JobSpec) -> SageMakerSettings:
    return settings_of(spec, SageMakerSettings)
