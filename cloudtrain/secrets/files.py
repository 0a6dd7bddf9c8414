"""Credential files, recognised by name and by content (``credential_files.json``): never packaged or uploaded unless
an ``--include`` names them. A whole home folder is refused."""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from cloudtrain.secrets.masking import MASK, mask_text

#: Files this small or smaller are read to look for credentials whatever their name.
SNIFF_BYTES = 64 * 1024
_SHELL_FILES = frozenset({".bashrc", ".bash_profile", ".bash_history", ".profile", ".zshrc", ".zsh_history"})


class _ContentRule(NamedTuple):
    why: str
    pattern: re.Pattern[bytes]
    also: bytes | None
    json_only: bool
    #: Lower-case texts one of which every match holds: a head with none is not searched (saved a dry run 15-20 ms).
    hints: tuple[bytes, ...] = ()


class NameRule(NamedTuple):
    """One category's shell patterns, matched the cheapest way that gives fnmatch's answer."""

    category: str
    exact: frozenset[str]
    ends: tuple[str, ...]
    starts: tuple[str, ...]
    other: re.Pattern[str] | None

    def matches(self, lowered: str) -> bool:
        return (
            lowered in self.exact
            or lowered.endswith(self.ends)
            or lowered.startswith(self.starts)
            or (self.other is not None and self.other.match(lowered) is not None)
        )


def name_rule(category: str, patterns: list[str]) -> NameRule:
    """The shell patterns of one category (lower case) as one :class:`NameRule`."""

    def plain(text: str) -> bool:
        return not any(c in text for c in "*?[")

    exact = [p for p in patterns if plain(p)]
    ends = [p for p in patterns if p.startswith("*") and plain(p[1:])]
    starts = [p for p in patterns if p.endswith("*") and plain(p[:-1]) and p not in ends]
    rest = [p for p in patterns if p not in exact + ends + starts]
    other = re.compile("|".join(map(fnmatch.translate, rest))) if rest else None
    return NameRule(category, frozenset(exact), tuple(p[1:] for p in ends), tuple(p[:-1] for p in starts), other)


class _Rules(NamedTuple):
    names: tuple[NameRule, ...]
    content: tuple[_ContentRule, ...]


@functools.cache
def _document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(Path(__file__).with_name("credential_files.json").read_text(encoding="utf-8"))
    return document


@functools.cache
def _rules() -> _Rules:
    """The name and content rules, built on first use (compiling 90 patterns cost a dry run 4-6 ms)."""
    doc = _document()
    names = tuple(
        name_rule(category, [entry["pattern"].lower() for entry in entries])
        for category, entries in doc["names"].items()
    )
    content = tuple(
        _ContentRule(
            rule["why"],
            re.compile(rule["pattern"].encode()),
            rule["also"].encode() if rule.get("also") else None,
            bool(rule.get("json")),
            tuple(hint.encode() for hint in rule.get("hints", ())),
        )
        for rule in doc["content"]
    )
    return _Rules(names, content)


def credential_name(name: str) -> str | None:
    """``"credential"`` or ``"environment file"`` for an entry called ``name`` (case-blind), or ``None``."""
    lowered = name.lower()
    return next((rule.category for rule in _rules().names if rule.matches(lowered)), None)


def credential_content(head: bytes) -> str | None:
    """What credential the start of a file holds (a private key, a Google service-account or user credential, an OAuth
    secret, Docker or netrc logins, AWS keys, a lone known token), whatever it is called; else ``None``."""
    is_json = head.lstrip()[:1] == b"{"
    lowered = head.lower()
    for rule in _rules().content:
        if rule.json_only and not is_json:
            continue
        if rule.hints and not any(hint in lowered for hint in rule.hints):
            continue
        if rule.pattern.search(head) and (rule.also is None or rule.also in head):
            return rule.why
    if len(head) <= 4096:
        text = head.strip().decode("utf-8", errors="replace")
        if text and not any(c.isspace() for c in text) and mask_text(text) == MASK:
            return "holds a token"
    return None


def credential_in(path: str | os.PathLike[str], size: int) -> str | None:
    """Why a small regular file is a credential by its content, or ``None`` (larger files are not read)."""
    if size > SNIFF_BYTES:
        return None
    with open(path, "rb") as f:
        return credential_content(f.read(SNIFF_BYTES))


def home_markers(folder: Path) -> list[str]:
    """The files that make ``folder`` a home folder (``.bashrc``, ``.profile``, ``.cache``, …), or ``[]``:
    a folder is one when it is ``$HOME``, or holds two of them, one a shell's own file."""
    try:
        if folder.resolve() == Path.home().resolve():
            return [str(Path.home())]
        found = sorted(name for name in _document()["home"]["markers"] if os.path.lexists(folder / name))
    except (OSError, RuntimeError):  # no home (a bare container): nothing to compare
        return []
    return found if len(found) >= 2 and _SHELL_FILES.intersection(found) else []
