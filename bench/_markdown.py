"""Markdown pieces every bench section uses: tables and the provenance line under each heading.

Below :mod:`bench.report` and the section writers (``_logs_table``), so none of them imports the
report that assembles them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bench import _provenance


def table(headers: list[str], rows: Iterable[list[Any]], align: str = "") -> str:
    """A markdown table; ``align`` has one l/r per column (default: first left, rest right)."""
    align = align or "l" + "r" * (len(headers) - 1)
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def commit_note(check: _provenance.Check | None) -> str:
    """After "on commit X": nothing when it is on main, else why its code cannot be compared."""
    if check is None or check.on_main:
        return ""
    if check.on_main is None:
        return " (not checked: no git repository here)"
    return " (**not on main**)"


def off_main_note(check: _provenance.Check | None) -> str:
    """A sentence when the bench's commit is not in the report's history."""
    if check is None or check.on_main is not False:
        return ""
    return (
        f" **Not on main:** commit {check.commit or '(none recorded)'} is not in this report's history, so what "
        "changed since it cannot be told: these figures may not describe this report's code."
    )


def stale_note(check: _provenance.Check | None) -> str:
    """A sentence when files on the bench's measured path changed after its run."""
    if check is None or not check.stale:
        return ""
    shown = ", ".join(f"`{path}`" for path in check.changed[:5])
    more = f" and {len(check.changed) - 5} more" if len(check.changed) > 5 else ""
    return (
        f" **Stale:** {len(check.changed)} file(s) on its measured path changed since commit {check.commit} "
        f"({shown}{more}): these figures describe that commit's code, not this report's."
    )


def provenance(entry: dict | None) -> str:
    """One line: when this bench ran and how it ended, and whether its figures still describe the code."""
    if not entry:
        return "_Not run._\n"
    if entry["status"] == "skipped":
        return f"_Not measured in this run: {entry['error']}._\n"
    check = entry.get("check")
    commit = f" on commit {entry['commit']}{commit_note(check)}" if entry.get("commit") else ""
    line = (
        f"Measured {entry.get('started', '?')}{commit}, {entry.get('seconds', '?')} s, "
        f"load {entry.get('load_before', '?')} before"
        + (f", {entry['load_after']} after" if entry.get("load_after") else "")
        + " (1/5/15 min)"
    )
    own = entry.get("args", "")
    again = f"python -m bench --only {entry.get('name', entry['module'])}" + (
        f" --args '{entry['name']}={own}'" if own and "name" in entry else ""
    )
    line += f". Reproduce: `{again}` (this bench alone: `python -m {entry['module']}{' ' + own if own else ''}`)."
    if entry["status"] != "ok":
        line += f" **{entry['status']}**: {entry['error']}"
    return line + off_main_note(check) + stale_note(check) + "\n"
