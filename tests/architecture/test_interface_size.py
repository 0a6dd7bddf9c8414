"""The backend interface stays narrow (#50): the runtime ``Backend`` protocol, all its parts counted, has
at most 35 members; a backend's facts are one frozen record and its message words another; the config
checker asks a backend through two hooks. Read from the Protocol classes themselves."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from cloudtrain.backend_rules.interface import Facts, Words
from cloudtrain.backends.base import Backend
from cloudtrain.config.rules import ConfigRules


def members(protocol: type) -> set[str]:
    """The names a Protocol and the Protocols it extends declare: methods, properties, annotated attributes."""
    found: set[str] = set()
    for part in protocol.__mro__:
        if part in (object, typing.Protocol, typing.Generic) or not getattr(part, "_is_protocol", False):
            continue
        found |= {name for name in vars(part) if not name.startswith("_")}
        found |= set(getattr(part, "__annotations__", {}))
    return found


def test_the_runtime_backend_has_28_members_at_most_35() -> None:
    found = members(Backend)
    assert len(found) <= 35
    assert len(found) == 28, sorted(found)  # pinned: a new member is a decision, not a drift
    assert {"name", "facts", "words"} <= found


def test_facts_and_words_are_frozen_records_and_no_member_of_the_protocol() -> None:
    for record in (Facts(), Words()):
        field = dataclasses.fields(record)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, field, None)
        assert not {f.name for f in dataclasses.fields(record)} & members(Backend)


def test_the_config_checker_asks_a_backend_through_two_hooks() -> None:
    hooks = {name for name in members(ConfigRules) if name.endswith("checks") or name.startswith("check")}
    assert hooks == {"config_checks", "contract_checks"}
