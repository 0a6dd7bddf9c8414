"""Everything the CLI prints: per-replica log lines, the job summary, tables.

rich draws tables and colour on a terminal. Output that is not a terminal is plain text for
``grep``, ``cut`` and ``jq``: never wrapped, truncated or padded, tables as tab-separated rows
(one record per line, a header first), key-value blocks as ``key: value`` lines, titles on
stderr, and no colour codes or carriage-return progress bars (the user's own included). That
output never imports rich (a good part of a dry-run's own time).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, Iterable, Mapping, TextIO

from cloudtrain.backends.base import LogLine
from cloudtrain.events import parse as parse_event
from cloudtrain.words import counted  # noqa: F401  (the console's callers use it from here)

_PALETTE = ("cyan", "magenta", "green", "yellow", "blue", "bright_red", "bright_cyan", "bright_magenta")
_SEVERITY_STYLE = {"ERROR": "bold red", "CRITICAL": "bold red", "WARNING": "yellow"}


#: Terminal control sequences a program writes for colour and cursor moves (ECMA-48 CSI, OSC), and backspaces.
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\b\x00-\x08\x0b-\x1f\x7f]")


#: rich's markup tags ([bold], [/yellow], [/]); ``\\[`` is a literal bracket.
_MARKUP = re.compile(r"(\\*)\[([a-z#/@][^\[\]]*?)?\]")


def make_console(stream: TextIO | None = None):
    """rich's Console on a terminal (or with FORCE_COLOR); a :class:`PlainConsole` anywhere else."""
    import os

    target = stream or sys.stdout
    isatty = getattr(target, "isatty", None)
    if not (isatty and isatty()) and not os.environ.get("FORCE_COLOR"):
        return PlainConsole(stream)
    from rich.console import Console

    return Console(file=stream, highlight=False, soft_wrap=True)


class PlainConsole:
    """What a pipe or a file gets: whole lines with rich's markup taken out, and no rich import."""

    is_terminal = False

    def __init__(self, stream: TextIO | None = None):
        self._stream = stream

    @property
    def file(self) -> TextIO:
        return self._stream or sys.stdout  # looked up per line, so it follows redirection (and pytest's capture)

    def print(self, *objects: Any, **_: Any) -> None:
        text = " ".join(o if isinstance(o, str) else _render_plain(o) for o in objects)
        self.file.write(strip_markup(text) + "\n")

    def print_json(self, json_text: str | None = None, *, data: Any = None, **_: Any) -> None:
        self.file.write((json_text if json_text is not None else json.dumps(data, indent=2, default=str)) + "\n")


def _render_plain(renderable: Any) -> str:
    """A rich renderable someone handed a PlainConsole (a Table, a Text): its text, uncoloured, unwrapped."""
    if hasattr(renderable, "plain"):
        return renderable.plain
    import io

    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=10_000, color_system=None, soft_wrap=True).print(renderable)
    return out.getvalue().rstrip("\n")


def strip_markup(text: str) -> str:
    """``[bold]Job[/bold] 7`` → ``Job 7``; an escaped ``\\[x]`` stays ``[x]``."""
    def tag(m: re.Match) -> str:
        slashes = m.group(1)
        if len(slashes) % 2:  # escaped: the bracket is text
            return slashes[:-1] + m.group(0)[len(slashes):]
        return slashes
    return _MARKUP.sub(tag, text)


def escape(text: str) -> str:
    """Text with brackets that rich would read as markup made literal (rich.markup.escape, without rich)."""
    return re.sub(r"(\\*)(\[[a-z#/@][^\[]*?])", lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", text)


def plain(text: str) -> str:
    """What a line says without colour codes, backspaces or progress-bar rewrites (the last ``\\r`` part)."""
    return _CONTROL.sub("", text.rsplit("\r", 1)[-1]).rstrip()


def format_event(message: str) -> str | None:
    """The trainer's JSON event lines, made readable; ``None`` hides one (the plan, printed as text already).

    Lines that are not trainer events come back unchanged.
    """
    event = parse_event(message)
    if event is None:
        return message
    kind = event.get("event")
    if kind == "plan":
        return None
    if kind == "epoch":
        parts = [f"epoch {event.get('epoch')}/{event.get('epochs')}"]
        for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
            if isinstance(event.get(key), (int, float)):
                parts.append(f"{key} {event[key]:.4f}")
        if isinstance(event.get("examples_per_sec"), (int, float)):
            parts.append(f"{event['examples_per_sec']:,.0f} examples/s")
        if isinstance(event.get("epoch_time_s"), (int, float)):
            parts.append(f"{event['epoch_time_s']:.2f} s")
        return "  ".join(parts)
    if kind == "benchmark":
        return (f"benchmark: {event.get('model')} {event.get('strategy')} × {event.get('replicas')} replicas, "
                f"{event.get('precision')}, global batch {event.get('global_batch')}: "
                f"{_num(event.get('examples_per_sec') or 0.0)} examples/s, {_num(event.get('step_time_ms') or 0.0)} ms/step")
    if kind == "worker_done":
        return f"done ({event.get('task')})"
    if kind == "done":
        keys = ("val_accuracy", "accuracy", "examples_per_sec", "wall_time_s")
        return "done: " + "  ".join(f"{k} {_num(event[k])}" for k in keys if isinstance(event.get(k), (int, float)))
    return message


class ReplicaPrinter:
    """Prints log lines prefixed by replica, one stable colour per replica on a terminal.

    Lines of severity DEBUG (a backend's start-up noise, e.g. TensorFlow looking for CUDA on a
    machine without GPUs) are shown only with ``show_debug`` (``--debug``)."""

    def __init__(self, console=None, *, show_debug: bool = False):
        self.console = console or make_console()
        self.show_debug = show_debug
        self._colours: dict[str, str] = {}
        self._width = 8

    def __call__(self, line: LogLine) -> None:
        if line.severity.upper() == "DEBUG" and not self.show_debug:
            return
        message = format_event(line.message)  # `logs -o json` keeps the trainer's event lines as they are
        if message is None:
            return
        colour = self._colours.setdefault(line.replica, _PALETTE[len(self._colours) % len(_PALETTE)])
        self._width = max(self._width, len(line.replica))
        prefix = f"{line.replica:<{self._width}} | "
        late = f"(late, {line.timestamp:%H:%M:%S} UTC) " if line.late else ""  # arrived after newer lines of its replica
        if not self.console.is_terminal:
            self.console.file.write(f"{prefix}{late}{plain(message)}\n")
            return
        from rich.text import Text

        text = Text(prefix, style=colour)
        if late:
            text.append(late, style="dim")
        body = Text.from_ansi(message.rsplit("\r", 1)[-1])
        body.stylize(_SEVERITY_STYLE.get(line.severity.upper(), ""))
        text.append_text(body)
        self.console.print(text)


def line_dict(line: LogLine) -> dict[str, Any]:
    """A log line as ``-o json`` prints it."""
    out = {"timestamp": line.timestamp.isoformat(), "replica": line.replica, "severity": line.severity,
           "message": line.message}  # fmt: skip
    if line.late:
        out["late"] = True
    if line.receive_timestamp is not None:
        out["receive_timestamp"] = line.receive_timestamp.isoformat()
    return out


def print_kv(console, title: str, rows: Iterable[tuple[str, Any]]) -> None:
    """A titled block of ``key value`` rows; empty values are left out."""
    shown = [(key, str(value)) for key, value in rows if value not in (None, "", {}, ())]
    if not console.is_terminal:
        _plain_lines(console, [title, *(f"{key}: {value}" for key, value in shown)])
        return
    from rich.table import Table

    table = Table(title=title, show_header=False, title_justify="left", box=None, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in shown:
        table.add_row(key, value)
    console.print(table)


def print_table(console, columns: list[str], rows: Iterable[Iterable[Any]], title: str | None = None) -> None:
    """A table on a terminal; elsewhere a header and one tab-separated line per row (the title on stderr)."""
    cells = [["" if v is None else str(v) for v in row] for row in rows]
    if not console.is_terminal:
        if title:
            print(title, file=sys.stderr)
        _plain_lines(console, ["\t".join(columns), *("\t".join(c.replace("\t", " ") for c in row) for row in cells)])
        return
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")  # a narrow terminal wraps cells; nothing is cut
    for row in cells:
        table.add_row(*row)
    console.print(table)


def _plain_lines(console, lines: Iterable[str]) -> None:
    """Whole lines, straight to the console's file: rich would wrap them at 80 columns."""
    console.file.write("".join(f"{line}\n" for line in lines))
    console.file.flush()


def print_json(data: Any, stream: TextIO | None = None) -> None:
    (stream or sys.stdout).write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


def money(value: float | None) -> str | None:
    return None if value is None else f"${value:,.2f}"


def flatten(details: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for key, value in details.items():
        if isinstance(value, Mapping):
            rows.extend(flatten(value, f"{prefix}{key}."))
        else:
            rows.append((f"{prefix}{key}", _num(value) if isinstance(value, float) else value))
    return rows


#: Details that help debugging (``status -o json`` shows them) but crowd the end-of-run summary.
_SUMMARY_HIDDEN = {"contract", "replicas", "environment", "environment_cached", "environment_setup_s",
                   "metrics_file", "labels", "display_name", "exit_codes", "failed_replica",
                   "spot_interruptions"}  # fmt: skip


def summary_rows(details: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The end-of-run summary: outcome, timing, final metrics, where the outputs are."""
    rows = flatten({k: v for k, v in details.items() if k not in _SUMMARY_HIDDEN})
    return [(k, "; ".join(map(str, v)) if isinstance(v, (list, tuple)) else v) for k, v in rows]


def _num(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


