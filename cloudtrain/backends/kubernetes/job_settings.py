"""What only a Kubernetes job reads of its config: the ``kubernetes:`` section and the GPU type."""

from __future__ import annotations

from dataclasses import dataclass

from cloudtrain.backends.kubernetes.section import Kubernetes
from cloudtrain.spec import BackendSettings, JobSpec


@dataclass(frozen=True)
class KubernetesSettings(BackendSettings):
    section: Kubernetes | None = None  # the config's kubernetes: section
    gpu_type: str | None = None  # machine.accelerator_type: the provider's GPU node label

    def summary_rows(self) -> tuple[tuple[str, str | None], ...]:
        section = self.section or Kubernetes()
        workload = {"auto": "an indexed Job (a JobSet where the cluster has its CRD)", "yes": "a JobSet"}
        kind = workload.get(section.jobset, "an indexed Job")
        return (
            ("cluster", f"{section.context or 'the current kubeconfig context'}, namespace {section.namespace}"),
            ("pods", f"{kind} + headless Service"),
        )


def kubernetes_section(spec: JobSpec) -> Kubernetes:
    """The ``kubernetes:`` section of a spec (its defaults where the spec was built for another backend)."""
    found = spec.backend_settings
    if isinstance(found, KubernetesSettings) and found.section is not None:
        return found.section
    return Kubernetes()


def gpu_type(spec: JobSpec) -> str | None:
    found = spec.backend_settings
    return found.gpu_type if isinstance(found, KubernetesSettings) else None
