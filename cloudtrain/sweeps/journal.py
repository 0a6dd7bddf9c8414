"""The one reader of a local sweep's Optuna journal, checked before Optuna replays it (Optuna appends after a torn
line, breaking the file): a damaged journal is one :class:`~cloudtrain.statefiles.Damage`, a 0-byte one removed."""

from __future__ import annotations

import json
from pathlib import Path

from cloudtrain.statefiles import Damage, NotRegular, read_regular, remove_if_empty

NAME = "optuna.journal"


def damage(path: Path) -> Damage | None:
    """What is wrong with the journal at ``path``, or None when every line is a whole record (or it is absent)."""
    path = Path(path)
    remove_if_empty(path)
    try:
        raw = read_regular(path, inside=path.parent)  # a FIFO, a device or a link out of the sweep: unread
    except FileNotFoundError:
        return None
    except NotRegular as exc:
        return Damage(path, str(exc), f"move it away (mv {path} {path}.damaged) to start the sweep again")
    except OSError as exc:
        return Damage(path, f"cannot be read ({exc.strerror or exc})", "make it readable, or start a new sweep")
    lines = raw.split(b"\n")
    torn = lines.pop()  # after the last newline: b"" when the last record is whole
    for number, line in enumerate(lines, 1):
        problem = _problem(line)
        if problem:
            return Damage(path, f"line {number} {problem}", _recover(path, number - 1))
    if torn:
        return Damage(
            path,
            f"line {len(lines) + 1} is torn (no end of line: the sweep was killed while writing it)",
            _recover(path, len(lines)),
        )
    return None


def replay_failed(path: Path, exc: Exception) -> Damage:
    """A journal whose lines parse but that Optuna cannot replay (records out of order, another study's)."""
    what = f"{type(exc).__name__}: {exc}".rstrip(": ")
    return Damage(path, f"Optuna cannot replay it ({what})", "move it away and start a new sweep")


def missing_study(path: Path, name: str) -> Damage:
    """A journal that replays but holds no study of this sweep (its first records were cut off)."""
    return Damage(
        path,
        f"holds no study {name!r} (its first records are missing)",
        f"move it away (mv {path} {path}.damaged) to start the sweep again",
    )


def _problem(line: bytes) -> str | None:
    try:
        entry = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return "is not UTF-8"
    except ValueError:
        return "is not JSON"
    if not isinstance(entry, dict) or "op_code" not in entry:
        return "is not an Optuna record"
    return None


def _recover(path: Path, good: int) -> str:
    if good == 0:
        return f"no trial before it can be read; move it away (mv {path} {path}.damaged) to start the sweep again"
    return (
        f"to resume from the {good} whole lines before it: head -n {good} {path} > {path}.good && "
        f"mv {path}.good {path}; or start a new sweep"
    )
