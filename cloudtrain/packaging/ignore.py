"""What never goes into a training package, and what an ignore file leaves out: built-in excludes
(:func:`builtin_exclude`) cannot be re-included; then every ``.gitignore`` and ``.cloudtrainignore`` inside the package
folder, with git's precedence. Ignore files outside it are not read."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cloudtrain.secrets.files import SNIFF_BYTES, credential_content, credential_name, name_rule

__all__ = ["SNIFF_BYTES", "credential_content"]  # recognised by content: cloudtrain.secrets.files

IGNORE_FILES = (".gitignore", ".cloudtrainignore")

#: Built-in excludes by category, as shell patterns on an entry's name; credentials: :mod:`cloudtrain.secrets.files`.
BUILTIN_EXCLUDES: dict[str, tuple[str, ...]] = {
    "version control": (".git", ".hg", ".svn"),
    "ignore file": (".gitignore", ".cloudtrainignore"),
    "cache": (
        "__pycache__",
        "*.pyc",
        "*.pyo",
        ".DS_Store",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".ipynb_checkpoints",
        ".venv",
    ),
}

_BUILTIN = [name_rule(category, [p.lower() for p in patterns]) for category, patterns in BUILTIN_EXCLUDES.items()]


def builtin_exclude(name: str) -> str | None:
    """The built-in category that excludes an entry called ``name`` (case-blind), or ``None``: ``"credential"``,
    ``"environment file"`` (:func:`cloudtrain.secrets.files.credential_name`) or one of :data:`BUILTIN_EXCLUDES`."""
    lowered = name.lower()
    return next((rule.category for rule in _BUILTIN if rule.matches(lowered)), None) or credential_name(name)


@dataclass(frozen=True)
class IgnoreRule:
    """One pattern line of an ignore file."""

    pattern: str  # as written, for messages
    regex: re.Pattern[str]  # matches a path relative to ``base``
    negate: bool
    dir_only: bool
    base: str  # folder of the ignore file, relative to the package dir ("" = the root)
    source: str  # "sub/.cloudtrainignore:3"

    def matches(self, relpath: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        if self.base:
            if not relpath.startswith(self.base + "/"):
                return False
            relpath = relpath[len(self.base) + 1 :]
        return self.regex.match(relpath) is not None


def parse_ignore_lines(lines: Iterable[str], *, base: str = "", source: str = "") -> list[IgnoreRule]:
    """Parse gitignore-syntax lines into rules: comments, ``\\#`` / ``\\!`` escapes, ``!`` negation, a trailing ``/``
    for folders, a leading or inner ``/`` anchoring to the file's folder, ``*``, ``?``, ``[...]`` and ``**``; trailing
    spaces dropped unless escaped."""
    rules: list[IgnoreRule] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        while line.endswith(" ") and not line.endswith("\\ "):
            line = line[:-1]
        if not line or line.startswith("#"):
            continue
        written = line
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith(("\\!", "\\#")):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        body = _translate(line.lstrip("/"))
        regex = re.compile(("^" if anchored else "^(?:.*/)?") + body + "$", re.DOTALL)
        where = f"{source}:{number}" if source else f"line {number}"
        rules.append(IgnoreRule(written, regex, negate, dir_only, base, where))
    return rules


def is_ignored(rules: Sequence[IgnoreRule], relpath: str, is_dir: bool) -> IgnoreRule | None:
    """The rule that excludes ``relpath`` (last match wins), or ``None`` if it is kept."""
    verdict: IgnoreRule | None = None
    for rule in rules:
        if rule.matches(relpath, is_dir):
            verdict = None if rule.negate else rule
    return verdict


def _translate(pattern: str) -> str:
    """A gitignore glob (no leading ``/``, no trailing ``/``) as a regular expression."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            stars = j - i
            starts_segment = i == 0 or pattern[i - 1] == "/"
            if stars == 2 and starts_segment and j == n:
                out.append(".*")  # "x/**": everything inside x
            elif stars == 2 and starts_segment and pattern[j] == "/":
                out.append("(?:[^/]*/)*")  # "**/": zero or more folders
                j += 1
            else:
                out.append("[^/]*")
            i = j
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            k = i + 1
            k += pattern[k : k + 1] in ("!", "^")
            k += pattern[k : k + 1] == "]"
            end = pattern.find("]", k)
            if end == -1:
                out.append(re.escape(c))
            else:
                inner = pattern[i + 1 : end].replace("\\", "\\\\")
                if inner[:1] in ("!", "^"):
                    inner = "^" + inner[1:]
                out.append(f"(?!/)[{inner}]")
                i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
