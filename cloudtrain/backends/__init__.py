"""The one list of backends. Registering one is one line: ``register(name, "its.package")``.

History, the CLI's ``--backend`` choices, job-id parsing and the config schema read
:func:`names` and :func:`get_backend`. Backends load lazily: naming one imports its package,
and only its calls that talk to the cloud import the cloud's SDK. Importing this module
imports no backend (``history`` reads the names on every ``status``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cloudtrain.errors import UsageError

if TYPE_CHECKING:
    from cloudtrain.backends.base import Backend

_REGISTRY: dict[str, str] = {}  # name -> package exposing BACKEND, in registration order
#: The backend that runs a job on this machine: what ``--local`` picks.
LOCAL = "local"


def register(name: str, package: str) -> None:
    """Make ``name`` a backend: ``package`` exposes ``BACKEND`` (a :class:`~cloudtrain.backends.base.Backend`)."""
    _REGISTRY[name] = package


register("vertex", "cloudtrain.backends.vertex")
register("sagemaker", "cloudtrain.backends.sagemaker")
register("local", "cloudtrain.backends.local")
register("slurm", "cloudtrain.backends.slurm")


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def clouds() -> tuple[str, ...]:
    """The backends that run on someone else's machines (every one but ``local``)."""
    return tuple(n for n in _REGISTRY if n != LOCAL)


def get_backend(name: str) -> Backend:
    if name not in _REGISTRY:
        raise UsageError(f"unknown backend {name!r}; allowed: {', '.join(_REGISTRY)}")
    return importlib.import_module(_REGISTRY[name]).BACKEND


def parse_job_id(text: str) -> tuple[str, str, dict[str, str]] | None:
    """``(backend, short id, location)`` for a full job name any backend recognises, else None."""
    for name in _REGISTRY:
        found = get_backend(name).parse_job_id(text)
        if found is not None:
            return (name, *found)
    return None


def __getattr__(attr: str) -> Any:
    """``NAMES`` is read at call time (a test may register a backend)."""
    if attr == "NAMES":
        return names()
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


__all__ = ["LOCAL", "NAMES", "clouds", "get_backend", "names", "parse_job_id", "register"]
