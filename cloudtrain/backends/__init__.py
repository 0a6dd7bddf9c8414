"""The backends, as the floors above ``spec.py`` reach them: the registry and each :class:`~.base.Backend`.

The registry's names and rules (:mod:`cloudtrain.backend_rules`) are re-exported here; each whole runtime backend
comes through :func:`get_backend`. Registering one is a line in :mod:`cloudtrain.backend_rules`, or an entry point of
the ``cloudtrain.backends`` group (docs/how-to/add-a-backend.md). Importing this module imports no backend."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from cloudtrain import backend_rules
from cloudtrain.backend_rules import (
    DEFAULT_CONTRACT,
    LOCAL,
    PLUGIN_GROUP,
    SECTION_GROUP,
    PluginError,
    attaches_by_name,
    check_plugins,
    clouds,
    commands,
    listed_reader,
    names,
    parse_job_id,
    plugins,
    register,
    sdk_modules,
    sections,
    titles,
)

if TYPE_CHECKING:
    from cloudtrain.backends.base import Backend


def get_backend(name: str) -> Backend:
    """The whole backend ``name``: its rules and its runtime (its module's ``BACKEND``, imported on first use)."""
    return cast("Backend", backend_rules.rules(name))  # each BACKEND is declared a Backend where it is defined


def usable() -> Iterator[tuple[str, Backend]]:
    """``(name, backend)`` of every registered backend that loads, in registration order; a plugin that
    cannot be loaded is one warning line and skipped."""
    for name, found in backend_rules.usable():
        yield name, cast("Backend", found)


__all__ = [
    "DEFAULT_CONTRACT",
    "LOCAL",
    "commands",
    "PLUGIN_GROUP",
    "SECTION_GROUP",
    "PluginError",
    "attaches_by_name",
    "check_plugins",
    "clouds",
    "get_backend",
    "listed_reader",
    "names",
    "parse_job_id",
    "plugins",
    "register",
    "sdk_modules",
    "titles",
    "sections",
    "usable",
]
