"""cloudtrain's own small state files: written so they cannot tear, read so damage stays local.

* :func:`write_atomic`: the whole file to a temp file beside it, then a rename: a reader
  sees the old file or the new one, never half of one.
* :func:`append_line`: one ``write`` of one line under an exclusive lock, so two processes
  appending at once cannot interleave or tear a record.
* :func:`read_json_lines`: every good line of a JSON-lines file; bad lines (not UTF-8, not
  JSON, not an object) are skipped and named in one warning.
* :func:`read_json_object`: a JSON object file, or one :class:`StateError` line naming the
  file and what is wrong with it.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

from cloudtrain.errors import UsageError

log = logging.getLogger("cloudtrain.state")


class StateError(UsageError):
    """A file cloudtrain wrote is damaged (truncated, emptied, edited, or not a file)."""


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (temp file in the same folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def append_line(path: Path, line: str) -> None:
    """Append ``line`` (a newline is added) in one write, holding an exclusive lock on the file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _lock(fd)
        os.write(fd, data)
    finally:
        os.close(fd)  # closing releases the lock


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows: O_APPEND single writes are the best there is
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def read_json_lines(
    path: Path, check: Callable[[dict[str, Any]], str | None] | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for every good line of ``path``; [] when it does not exist.

    A line that is not UTF-8, not JSON or not an object, or that ``check`` finds a problem
    with, is skipped; all skipped lines are named in one warning. A ``path`` that cannot be read at all (a folder, no permission)
    is one warning and no records."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        _warn_once(f"warning: {path}: cannot be read ({exc.strerror or exc}); its records are ignored")
        return []
    found: list[tuple[int, dict[str, Any]]] = []
    bad: list[str] = []
    for number, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            bad.append(f"{number} (not UTF-8)")
            continue
        except ValueError:
            bad.append(f"{number} (not JSON)")
            continue
        problem = "not a JSON object" if not isinstance(entry, dict) else check(entry) if check else None
        if problem:
            bad.append(f"{number} ({problem})")
            continue
        found.append((number, entry))
    if bad:
        what = "line" if len(bad) == 1 else "lines"
        _warn_once(f"warning: {path}: skipped {what} {', '.join(bad)}; the other records are read")
    return found


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """A command may read a file several times; the same damage is reported once per process."""
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


def read_json_object(path: Path, *, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """The JSON object in ``path``, which must have the ``required`` keys; else one StateError line."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise StateError(f"{path}: missing") from None
    except OSError as exc:
        raise StateError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    problem = None
    data: Any = None
    if not raw.strip():
        problem = "empty"
    else:
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            problem = f"not UTF-8 (byte {exc.start})"
        except ValueError as exc:
            problem = f"not valid JSON, truncated? (line {getattr(exc, 'lineno', '?')}: {getattr(exc, 'msg', exc)})"
    if problem is None and not isinstance(data, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(data), "a number")
        problem = f"holds {kind}, not a JSON object"
    if problem is None:
        missing = [key for key in required if key not in data]
        if missing:
            problem = f"has no {', '.join(missing)}"
    if problem is not None:
        raise StateError(f"{path}: {problem}", hint="the file is damaged; remove it (or its run folder) and run again")
    return data
