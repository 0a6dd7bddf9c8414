"""What loading a config needs of a backend: :class:`ConfigRules`, its checks on :class:`LoadedConfig` and
:class:`JobConfig`, on this floor so the ground rules name none of them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, cast

from cloudtrain import backend_rules
from cloudtrain.backend_rules import Capability
from cloudtrain.backend_rules.interface import BackendRules

if TYPE_CHECKING:
    from cloudtrain.config.loaded import LoadedConfig
    from cloudtrain.config.yaml12 import LoadedYaml

#: A check of the config checker: the fields it reads, and the check (it raises ``loaded.error(...)``).
Check = tuple[tuple[str, ...], Callable[[], None]]


class ConfigRules(BackendRules, Protocol):
    """A backend as the config checker and loader see it."""

    def config_checks(self, loaded: LoadedConfig) -> list[Check]:
        """Checks of the keys only this backend reads (with ``Capability.CLUSTER``, location and machine too)."""
        ...

    def contract_checks(self, loaded: LoadedConfig) -> list[Check]:
        """Checks that hold wherever a job follows this backend's contract (``--local`` with its ``target`` too)."""
        ...

    def project(self, loaded: LoadedConfig) -> tuple[str | None, str | None]:
        """``(project, where it came from)``: the location key beside the region (None: none needed)."""
        ...

    def translate(self, loaded: LoadedYaml) -> tuple[dict[str, Any], list[str]] | None:
        """A document in one of its own formats as cloudtrain's keys and ``mapped:`` notes; else None."""
        ...


def rules(name: str) -> ConfigRules:
    """The backend ``name`` as the config sees it (:func:`cloudtrain.backend_rules.interface`, its config-time part)."""
    # each BACKEND is checked as a whole Backend where it is defined
    return cast(ConfigRules, backend_rules.rules(name))


def refusal(backend: BackendRules, capability: Capability, title: str = "", **fields: str) -> tuple[str, str]:
    """The message and fix of what ``backend`` cannot do, in its words (its title, or ``title``, filled in)."""
    return backend.facts.capabilities.refusal(capability).format(title=title or backend.words.title, **fields)


def usable() -> Iterator[tuple[str, ConfigRules]]:
    """``(name, rules)`` of every backend that loads, in registration order."""
    for name, found in backend_rules.usable():
        yield name, cast(ConfigRules, found)
