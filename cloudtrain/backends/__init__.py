"""The one list of backends. Registering one is one line: ``register(name, "its.module")``.

History, the CLI's ``--backend`` choices, job-id parsing and the config schema read
:func:`names`, :func:`sections` and :func:`get_backend`. Backends load lazily: naming one imports
its module, and only its calls that talk to the cloud import the cloud's SDK. Importing this module
imports no backend (``history`` reads the names on every ``status``).

A backend with keys of its own (a ``<name>:`` section of the job config) names the record of that
section too, ``section="its.section_module:Record"``: a module that imports only config records, so the
schema loads it while the config is being imported, without the backend.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from cloudtrain.errors import UsageError

if TYPE_CHECKING:
    from cloudtrain.backends.base import Backend
    from cloudtrain.config.records import Record

_REGISTRY: dict[str, str] = {}  # name -> module exposing BACKEND, in registration order
_SECTIONS: dict[str, str] = {}  # name -> "module:Record" of its `<name>:` config section
_SDK: dict[str, str] = {}  # top-level module of a cloud's libraries -> the backend whose extra installs it
_TITLES: dict[str, str] = {}  # name -> its title in messages, known without importing the backend
_LISTED: dict[str, str] = {}  # name -> "module:function": a job's own record, read without the backend
#: The backend that runs a job on this machine: what ``--local`` picks.
LOCAL = "local"
#: The contract and image-version rules a job run outside the clouds (``--local``, a Slurm cluster)
#: follows when its config names no ``target``.
DEFAULT_CONTRACT = "vertex"


def register(
    name: str,
    module: str,
    *,
    section: str | None = None,
    sdk: tuple[str, ...] = (),
    title: str | None = None,
    listed: str | None = None,
) -> None:
    """Make ``name`` a backend: ``module`` exposes ``BACKEND`` (a :class:`~cloudtrain.backends.base.Backend`);
    ``section``, ``"module:Record"``, is the record of its ``<name>:`` config keys, if it has any;
    ``sdk``, the top-level modules of its cloud's libraries, which the extra ``cloudtrain[<name>]``
    installs (pyproject.toml): a missing one is one line naming that install (:mod:`cloudtrain.extras`);
    ``title``, its ``Backend.title``, for ``cloudtrain --help`` (which imports no backend);
    ``listed``, ``"module:function"``, for a backend whose jobs keep their own record on this machine (a
    local run's folder): what ``list`` shows of one, read without loading the backend (see
    :func:`listed_reader`)."""
    _REGISTRY[name] = module
    if title is not None:
        _TITLES[name] = title
    if section is not None:
        _SECTIONS[name] = section
    if listed is not None:
        _LISTED[name] = listed
    for top in sdk:
        _SDK.setdefault(top, name)


# google.cloud, .api_core, .auth, .protobuf
register("vertex", "cloudtrain.backends.vertex", sdk=("google", "grpc"), title="Vertex AI")
# sagemaker.core
register("sagemaker", "cloudtrain.backends.sagemaker", sdk=("boto3", "botocore", "sagemaker"), title="SageMaker")
register(
    "local",
    "cloudtrain.backends.local.backend",
    section="cloudtrain.backends.local.section:Local",
    title="this machine",
    listed="cloudtrain.backends.local.find:listed",
)
register("slurm", "cloudtrain.backends.slurm.backend", section="cloudtrain.backends.slurm.section:Slurm", title="Slurm")


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def titles() -> dict[str, str]:
    """``{name: title}`` of every registered backend, in registration order (the name where none was given)."""
    return {name: _TITLES.get(name, name) for name in _REGISTRY}


def sections(among: Iterable[str] | None = None) -> dict[str, type[Record]]:
    """``{name: record}`` of the backends (all, or those ``among``) with a ``<name>:`` config section,
    in registration order; imports each section's module, never a backend."""
    wanted = _REGISTRY if among is None else set(among)
    found = {}
    for name, where in _SECTIONS.items():
        if name in wanted:
            module, _, record = where.partition(":")
            found[name] = getattr(importlib.import_module(module), record)
    return found


def listed_reader(name: str) -> Callable[[str], dict[str, Any] | None] | None:
    """The function that reads a job of backend ``name`` from its own record, by the id history keeps
    (``JobRecord.attach_id``): ``{"state", "created", "ended", "metrics", "folder"}``, or None when the
    record is gone; None for a backend whose jobs are known here only by history."""
    where = _LISTED.get(name)
    if where is None:
        return None
    module, _, function = where.partition(":")
    reader: Callable[[str], dict[str, Any] | None] = getattr(importlib.import_module(module), function)
    return reader


def clouds() -> tuple[str, ...]:
    """The backends that run on someone else's machines (every one but ``local``)."""
    return tuple(n for n in _REGISTRY if n != LOCAL)


def sdk_modules() -> dict[str, str]:
    """``{top-level module: backend}`` of every backend's cloud libraries: the backend's extra installs it."""
    return dict(_SDK)


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


__all__ = [
    "DEFAULT_CONTRACT",
    "LOCAL",
    "NAMES",
    "clouds",
    "get_backend",
    "listed_reader",
    "names",
    "parse_job_id",
    "register",
    "sdk_modules",
    "titles",
    "sections",
]
