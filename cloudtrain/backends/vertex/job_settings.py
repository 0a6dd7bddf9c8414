"""What only a Vertex AI job reads of its config: who it runs as, where, and how it is scheduled."""

from __future__ import annotations

from dataclasses import dataclass

from cloudtrain.spec import BackendSettings, JobSpec, settings_of
from cloudtrain.text.numbers import duration


@dataclass(frozen=True)
class VertexSettings(BackendSettings):
    """The top-level Vertex keys of a config (``service_account``, ``network``, ``flex_start``)."""

    service_account: str | None = None  # CustomJobSpec.serviceAccount
    network: str | None = None  # CustomJobSpec.network (a VPC peering)
    flex_start: bool = False  # Dynamic Workload Scheduler: Scheduling.strategy FLEX_START
    flex_max_wait_seconds: int | None = None  # Scheduling.maxWaitDuration

    def summary_rows(self) -> tuple[tuple[str, str | None], ...]:
        if not self.flex_start:
            return (("flex-start", None),)
        wait = self.flex_max_wait_seconds
        tail = f", waits up to {duration(wait)} for the machines" if wait else ""
        return (("flex-start", "yes (Dynamic Workload Scheduler)" + tail),)


def vertex_settings(spec: JobSpec) -> VertexSettings:
    return settings_of(spec, VertexSettings)
