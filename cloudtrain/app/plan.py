"""The plan of a job: the exact request(s) it would send, what it costs, its candidates (``--dry-run``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cloudtrain.app.prepare import Prepared, package_dict
from cloudtrain.backends import get_backend
from cloudtrain.data.staging import describe as describe_data
from cloudtrain.secrets.masking import mask_spec_document
from cloudtrain.spec import JobSpec, price_basis


@dataclass(frozen=True)
class Candidate:
    """One fallback entry: its spec and the request it would send if the ones before it got no capacity."""

    spec: JobSpec
    request: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        spec = self.spec
        return {
            "backend": spec.backend,
            "region": spec.region,
            "notes": list(spec.notes),
            "cost_per_hour": spec.cost_per_hour,
            "price_basis": price_basis(spec),
            "request": self.request,
        }


@dataclass(frozen=True)
class Plan:
    """What ``submit`` would do, and nothing uploaded or created. ``to_dict()`` is ``--dry-run -o json``."""

    prepared: Prepared
    request: dict[str, Any]
    fallbacks: tuple[Candidate, ...]

    @property
    def spec(self) -> JobSpec:
        return self.prepared.spec

    @property
    def package(self) -> Any:
        return self.prepared.package

    @property
    def cost_per_hour(self) -> float | None:
        return self.spec.cost_per_hour

    def to_dict(self) -> dict[str, Any]:
        spec = self.spec
        return {
            "backend": spec.backend,
            "region": spec.region,
            "job_name": spec.job_name,
            "project": {"id": spec.project, "source": spec.project_source} if spec.project else None,
            "notes": list(spec.notes),
            "package": package_dict(self.package),
            **({"data": describe_data(spec)} if spec.channels else {}),
            "request": self.request,
            "fallbacks": [candidate.to_dict() for candidate in self.fallbacks],
            "cost_per_hour": spec.cost_per_hour,
            "price_basis": price_basis(spec),
        }


def make_plan(prepared: Prepared, *, show_secrets: bool = False) -> Plan:
    """Render each candidate's request; ``env:`` values that look secret show as ``***`` unless ``show_secrets``."""

    def rendered(spec: JobSpec) -> dict[str, Any]:
        request = get_backend(spec.backend).render(spec, prepared.package)
        if show_secrets:
            return request
        masked: dict[str, Any] = mask_spec_document(
            request, spec.env, args=spec.args, hyperparameters=spec.hyperparameters
        )
        return masked

    return Plan(prepared, rendered(prepared.spec), tuple(Candidate(c, rendered(c)) for c in prepared.candidates[1:]))
