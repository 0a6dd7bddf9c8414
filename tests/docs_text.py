"""The manual as the tests read it: README.md and every page under docs/, one reader for all.

A fact may move from the README to a docs page (or between pages); the test that checks it reads
it through here, so the check moves with it instead of being dropped. A section is found by its
heading text at any level, and must be in exactly one page: one fact, one place.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"


def pages() -> list[Path]:
    """README.md first, then every docs page in path order (the order a reader of the tree meets them)."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def section(title: str) -> str:
    """The text under the one heading ``title`` (any level), up to the next heading of the same or a
    higher level."""
    found = []
    for page in pages():
        text = page.read_text()
        for m in re.finditer(rf"^(#+) {re.escape(title)}\n", text, re.M):
            end = re.compile(rf"^#{{1,{len(m[1])}}} ", re.M).search(text, m.end())
            found.append((page, text[m.end() : end.start() if end else len(text)]))
    where = [str(page) for page, _ in found]
    assert len(found) == 1, f"the heading {title!r} should be in exactly one page, found in {where}"
    return found[0][1]


def blocks(language: str, page: Path | None = None) -> list[str]:
    """The bodies of the fenced ```language blocks of one page, or of every page in order."""
    found = []
    for each in [page] if page else pages():
        found += re.findall(rf"^```{language}\n(.*?)^```", each.read_text(), re.S | re.M)
    return found


def shell_commands(page: Path) -> list[str]:
    """Each command of each ```sh block of a page, continuation lines joined, comments dropped."""
    return shell_commands_of(page.read_text())


def shell_commands_of(text: str) -> list[str]:
    """Each command of each ```sh block of ``text`` (a page, or a section of one), as :func:`shell_commands`."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
        for command in block.replace("\\\n", " ").splitlines():
            command = re.sub(r"(^|\s+)#.*$", "", command).strip()
            if command:
                commands.append(command)
    return commands
