"""Everything the CLI prints: log lines, the job summary, tables. rich on a terminal; otherwise plain text for ``grep``
and ``jq``, never wrapped or padded, and rich is never imported."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from typing import IO, TYPE_CHECKING, Any, Protocol, TextIO

from cloudtrain.following.events import parse as parse_event
from cloudtrain.text import counted as counted  # (the console's callers use it from here too)
from cloudtrain.text.numbers import measured, seconds
from cloudtrain.text.numbers import money as money  # the CLI's modules take it from here

if TYPE_CHECKING:  # annotations only: the console loads no backend (``list`` and ``--help`` stay light)
    from cloudtrain.job_states import LogLine

_PALETTE = ("cyan", "magenta", "green", "yellow", "blue", "bright_red", "bright_cyan", "bright_magenta")
_SEVERITY_STYLE = {"ERROR": "bold red", "CRITICAL": "bold red", "WARNING": "yellow"}


#: Terminal control sequences a program writes for colour and cursor moves (ECMA-48 CSI, OSC), and backspaces.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\b\x00-\x08\x0b-\x1f\x7f]"
)


#: rich's markup tags ([bold], [/yellow], [/]); ``\\[`` is a literal bracket.
_MARKUP = re.compile(r"(\\*)\[([a-z#/@][^\[\]]*?)?\]")


class Console(Protocol):
    """What the CLI prints through: rich's Console on a terminal, a :class:`PlainConsole` anywhere else."""

    @property
    def file(self) -> IO[str]: ...

    @property
    def is_terminal(self) -> bool: ...

    @property
    def width(self) -> int: ...

    def print(self, *objects: Any, markup: bool | None = None) -> None: ...

    def print_json(self, *, data: Any = None) -> None: ...


def make_console(stream: TextIO | None = None) -> Console:
    """rich's Console on a terminal (or with FORCE_COLOR); a :class:`PlainConsole` anywhere else."""
    target = stream or sys.stdout
    isatty = getattr(target, "isatty", None)
    if not (isatty and isatty()) and not os.environ.get("FORCE_COLOR"):
        return PlainConsole(stream)
    from rich.console import Console

    return Console(file=stream, highlight=False, soft_wrap=True)


class PlainConsole:
    """What a pipe or a file gets: whole lines with rich's markup taken out, and no rich import."""

    is_terminal = False
    width = 10_000  # lines are never wrapped (as in _render_plain)

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
        plain: str = renderable.plain
        return plain
    import io

    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=10_000, color_system=None, soft_wrap=True).print(renderable)
    return out.getvalue().rstrip("\n")


def strip_markup(text: str) -> str:
    """``[bold]Job[/bold] 7`` → ``Job 7``; an escaped ``\\[x]`` stays ``[x]``."""

    def tag(m: re.Match[str]) -> str:
        slashes: str = m.group(1)
        if len(slashes) % 2:  # escaped: the bracket is text
            return slashes[:-1] + m.group(0)[len(slashes) :]
        return slashes

    return _MARKUP.sub(tag, text)


def escape(text: str) -> str:
    """Text with brackets that rich would read as markup made literal (rich.markup.escape, without rich)."""
    return re.sub(r"(\\*)(\[[a-z#/@][^\[]*?])", lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", text)


def plain(text: str) -> str:
    """What a line says without colour codes, backspaces or progress-bar rewrites (the last ``\\r`` part)."""
    return _CONTROL.sub("", text.rsplit("\r", 1)[-1]).rstrip()


def format_event(message: str, epochs: int | None = None) -> str | None:
    """The trainer's JSON event lines made readable (None hides one: the plan); other lines unchanged."""
    event = parse_event(message)
    if event is None:
        return message
    kind = event.get("event")
    if kind == "plan":
        return None
    if kind == "epoch":
        total = event.get("epochs") or epochs
        parts = [f"epoch {event.get('epoch')}/{total}" if total else f"epoch {event.get('epoch')}"]
        for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
            if isinstance(event.get(key), (int, float)):
                parts.append(f"{key} {measured(event[key])}")
        if isinstance(event.get("examples_per_sec"), (int, float)):
            parts.append(f"{measured(event['examples_per_sec'])} examples/s")
        if isinstance(event.get("epoch_time_s"), (int, float)):
            parts.append(f"{measured(event['epoch_time_s'])} s")
        return "  ".join(parts)
    if kind == "benchmark":
        return (
            f"benchmark: {event.get('model')} {event.get('strategy')} × {_replicas(event.get('replicas'))}, "
            f"{event.get('precision')}, global batch {event.get('global_batch')}: "
            f"{measured(event.get('examples_per_sec') or 0.0)} examples/s, "
            f"{measured(event.get('step_time_ms') or 0.0)} ms/step"
        )
    if kind == "worker_done":
        return f"done ({event.get('task')})"
    if kind == "done":
        keys = ("val_accuracy", "accuracy", "examples_per_sec", "wall_time_s")
        return "done: " + "  ".join(f"{k} {measured(event[k])}" for k in keys if isinstance(event.get(k), (int, float)))
    if kind == "metric":
        step = f" (step {event['step']})" if event.get("step") is not None else ""
        return f"{event.get('name')} {measured(event.get('value'))}{step}"
    fields = "  ".join(f"{k} {measured(v)}" for k, v in event.items() if k != "event")
    return f"{kind}: {fields}" if fields else str(kind)


class ShownLines:
    """What the CLI (and ``Job.logs``) shows of each line: DEBUG start-up noise only with ``show_debug``, events as
    words (``epoch 3/12  loss 0.41``) without an epoch's repeat, the rest as is."""

    def __init__(self, *, show_debug: bool = False, epochs: int | None = None):
        self.show_debug = show_debug
        self.epochs = epochs  # the job's --epochs: the total of epoch lines whose events give none
        self._last_epoch: dict[str, dict[str, Any]] = {}  # replica → its last epoch event

    def __call__(self, line: LogLine) -> str | None:
        """The line's text as shown, or None when it is not shown."""
        if line.severity.upper() == "DEBUG" and not self.show_debug:
            return None
        event = parse_event(line.message) or {}
        last = self._last_epoch.get(line.replica)
        if event.get("event") == "epoch":
            self._last_epoch[line.replica] = event
        elif (
            event.get("event") == "metric"
            and last is not None
            and last.get(str(event.get("name"))) == event.get("value")
        ):
            return None  # the metric the replica's last epoch line showed (the sweep's, right after it)
        return format_event(line.message, self.epochs)  # `logs -o json` keeps the event lines as they are


class ReplicaPrinter:
    """Prints log lines prefixed by replica, one stable colour each on a terminal; DEBUG only with ``show_debug``."""

    def __init__(self, console: Console | None = None, *, show_debug: bool = False, epochs: int | None = None):
        self.console = console or make_console()
        self.shown = ShownLines(show_debug=show_debug, epochs=epochs)
        self._colours: dict[str, str] = {}
        self._width = 8

    def __call__(self, line: LogLine) -> None:
        message = self.shown(line)
        if message is None:
            return
        colour = self._colours.setdefault(line.replica, _PALETTE[len(self._colours) % len(_PALETTE)])
        self._width = max(self._width, len(line.replica))
        prefix = f"{line.replica:<{self._width}} | "
        late = (
            f"(late, {line.timestamp:%H:%M:%S} UTC) " if line.late else ""
        )  # arrived after newer lines of its replica
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
    out: dict[str, Any] = {
        "timestamp": line.timestamp.isoformat(),
        "replica": line.replica,
        "severity": line.severity,
        "message": line.message,
    }
    if line.late:
        out["late"] = True
    if line.receive_timestamp is not None:
        out["receive_timestamp"] = line.receive_timestamp.isoformat()
    return out


def print_kv(console: Console, title: str, rows: Iterable[tuple[str, Any]]) -> None:
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


def print_table(
    console: Console,
    columns: list[str],
    rows: Iterable[Iterable[Any]],
    title: str | None = None,
    id_columns: Iterable[str] = (),
) -> None:
    """A table on a terminal, else tab-separated rows; ``id_columns`` are never wrapped or cut."""
    cells = [["" if v is None else str(v) for v in row] for row in rows]
    if not console.is_terminal:
        if title:
            print(title, file=sys.stderr)
        _plain_lines(console, ["\t".join(columns), *("\t".join(c.replace("\t", " ") for c in row) for row in cells)])
        return
    from rich.table import Table

    ids = set(id_columns)
    natural = [max([len(column), *(len(row[i]) for row in cells)]) for i, column in enumerate(columns)]
    id_width = sum(w for column, w in zip(columns, natural, strict=True) if column in ids)
    frame = 3 * len(columns) + 1  # a border and one space of padding either side of every cell
    others = [w for column, w in zip(columns, natural, strict=True) if column not in ids]
    cap = _fair_cap(others, console.width - frame - id_width)
    table = Table(title=title, title_justify="left")
    for column, width in zip(columns, natural, strict=True):
        if column in ids:
            table.add_column(column, no_wrap=True, min_width=width)
        else:  # a narrow terminal wraps these cells; nothing is cut
            table.add_column(column, overflow="fold", max_width=None if cap is None else max(cap, 1))
    for row in cells:
        table.add_row(*row)
    console.print(table)


def _fair_cap(widths: list[int], budget: int) -> int | None:
    """The largest width every column can be cut to so that all fit ``budget``; None when they fit already."""
    if sum(widths) <= budget:
        return None
    for cap in range(max(widths, default=0), 0, -1):
        if sum(min(w, cap) for w in widths) <= budget:
            return cap
    return 1


def _plain_lines(console: Console, lines: Iterable[str]) -> None:
    """Whole lines, straight to the console's file: rich would wrap them at 80 columns."""
    console.file.write("".join(f"{line}\n" for line in lines))
    console.file.flush()


def print_json(data: Any, stream: TextIO | None = None) -> None:
    (stream or sys.stdout).write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


def flatten(details: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A job's details as rows for people: words for keys, ``yes``/``no``, seconds with units, replicas counted,
    sensible precision; a metric keeps its code's name. ``-o json`` has the raw values."""
    rows: list[tuple[str, Any]] = []
    for key, value in details.items():
        label = f"{prefix}{_words(key)}"
        if key == "metrics" and isinstance(value, Mapping):
            rows += [(f"metrics.{k}", _human(k, v)) for k, v in value.items()]
        elif key == "exit_codes" and isinstance(value, Mapping):
            rows.append((label, ", ".join(f"{k} {'not yet' if v is None else v}" for k, v in value.items())))
        elif isinstance(value, Mapping):
            rows.extend(flatten(value, f"{label} "))
        elif key == "replicas" and isinstance(value, (list, tuple)):
            rows.append((label, f"{len(value)} ({', '.join(map(str, value))})"))
        elif isinstance(value, (list, tuple)):
            rows.append((label, "; ".join(str(_human(key, v)) for v in value)))
        else:
            rows.append((label, _human(key, value)))
    return rows


def _words(key: str) -> str:
    """``environment_setup_s`` → ``environment setup``; ``usd`` → ``USD``."""
    key = key[:-2] if key.endswith("_s") else key
    return "USD" if key == "usd" else key.replace("_", " ")


_TIMES = ("created", "ended", "started")


def _human(key: str, value: Any) -> Any:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key in _TIMES and isinstance(value, str):
        try:
            when = dt.datetime.fromisoformat(value)
        except ValueError:
            return value
        return (
            f"{when.astimezone(dt.timezone.utc):%Y-%m-%d %H:%M:%S} UTC" if when.tzinfo else f"{when:%Y-%m-%d %H:%M:%S}"
        )
    if key.endswith("_s") and isinstance(value, (int, float)):
        return seconds(value)
    return measured(value) if isinstance(value, float) else value


#: Details that help debugging (``status -o json`` shows them) but crowd the end-of-run summary.
_SUMMARY_HIDDEN = {
    "contract",
    "replicas",
    "environment",
    "environment_cached",
    "environment_setup_s",
    "metrics_file",
    "labels",
    "display_name",
    "exit_codes",
    "failed_replica",
    "spot_interruptions",
}


def summary_rows(details: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The end-of-run summary: outcome, timing, final metrics, where the outputs are."""
    return flatten({k: v for k, v in details.items() if k not in _SUMMARY_HIDDEN})


def _replicas(value: object) -> str:
    """``1 replica``, ``4 replicas``; a value that is not a count as it came."""
    return counted(value, "replica") if isinstance(value, int) and not isinstance(value, bool) else f"{value} replicas"
