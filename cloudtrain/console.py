"""Everything the CLI prints: per-replica log lines, the job summary, tables.

rich is used for colour on a terminal; piped output stays plain text so it can be grepped.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Iterable, Mapping, TextIO

from cloudtrain.backends.base import JobStatus, LogLine

_PALETTE = ("cyan", "magenta", "green", "yellow", "blue", "bright_red", "bright_cyan", "bright_magenta")
_SEVERITY_STYLE = {"ERROR": "bold red", "CRITICAL": "bold red", "WARNING": "yellow"}


def make_console(stream: TextIO | None = None):
    from rich.console import Console

    return Console(file=stream or sys.stdout, highlight=False, soft_wrap=True)


class ReplicaPrinter:
    """Prints log lines prefixed by replica, one stable colour per replica on a terminal."""

    def __init__(self, console=None):
        self.console = console or make_console()
        self._colours: dict[str, str] = {}
        self._width = 8

    def __call__(self, line: LogLine) -> None:
        from rich.text import Text

        colour = self._colours.setdefault(line.replica, _PALETTE[len(self._colours) % len(_PALETTE)])
        self._width = max(self._width, len(line.replica))
        text = Text(f"{line.replica:<{self._width}} | ", style=colour)
        text.append(line.message, style=_SEVERITY_STYLE.get(line.severity.upper(), ""))
        self.console.print(text)


def print_kv(console, title: str, rows: Iterable[tuple[str, Any]]) -> None:
    from rich.table import Table

    table = Table(title=title, show_header=False, title_justify="left", box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    for key, value in rows:
        if value not in (None, "", {}, ()):
            table.add_row(key, str(value))
    console.print(table)


def print_table(console, columns: list[str], rows: Iterable[Iterable[Any]], title: str | None = None) -> None:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    console.print(table)


def print_json(data: Any, stream: TextIO | None = None) -> None:
    (stream or sys.stdout).write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


def status_dict(status: JobStatus) -> dict[str, Any]:
    return {
        "job_id": status.job_id,
        "name": status.name,
        "state": status.state.value,
        "native_state": status.native_state,
        "message": status.message,
        "console_url": status.console_url,
        "created": status.created.isoformat() if status.created else None,
        "ended": status.ended.isoformat() if status.ended else None,
        "details": dict(status.details),
    }


def money(value: float | None) -> str | None:
    return None if value is None else f"${value:,.2f}"


def flatten(details: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for key, value in details.items():
        if isinstance(value, Mapping):
            rows.extend(flatten(value, f"{prefix}{key}."))
        else:
            rows.append((f"{prefix}{key}", value))
    return rows
