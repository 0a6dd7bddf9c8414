"""cloudtrain's own small state files: written so they cannot tear, read so damage stays local. A 0-byte file reads as
absent; :func:`read_regular` refuses non-regular files, links out and files over :data:`MAX_STATE_BYTES` in one line;
writers never write through a link."""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cloudtrain import filetree
from cloudtrain.errors import UsageError

log = logging.getLogger("cloudtrain.state")


class StateError(UsageError):
    """A file cloudtrain wrote is damaged (truncated, emptied, edited, or not a file)."""


MAX_STATE_BYTES = 1 << 30  # a history of millions of records fits; /dev/zero through a link does not get read
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class NotRegular(OSError):
    """A state file that is not a regular file, or too large to be cloudtrain's: ``str()`` says what it is."""


def _outside(path: Path, inside: Path | None) -> str | None:
    """What is wrong when ``path`` is a link that leads out of ``inside`` (None: it stays, or no ``inside``)."""
    if inside is None or not os.path.islink(path):
        return None
    real = os.path.realpath(path)
    return None if filetree.within(real, os.path.realpath(inside)) else f"is a link to {real}, outside {inside}"


def read_regular(path: Path, *, inside: Path | None = None, limit: int = MAX_STATE_BYTES) -> bytes:
    """The bytes of ``path`` if a regular file of at most ``limit`` bytes (with ``inside``, no link out of it), else
    :class:`NotRegular`; never blocks on a FIFO, never reads a device."""
    problem = _outside(Path(path), inside)
    if problem:
        raise NotRegular(problem)
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            target = f" (a link to {os.path.realpath(path)})" if os.path.islink(path) else ""
            raise NotRegular(f"is {filetree.kind(info.st_mode)}{target}, not a regular file")
        if info.st_size > limit:
            raise NotRegular(f"is {info.st_size:,} bytes, more than cloudtrain's {limit:,}-byte limit for it")
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            raise NotRegular(f"grew past cloudtrain's {limit:,}-byte limit for it while being read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _cannot_read(exc: OSError) -> str:
    return str(exc) if isinstance(exc, NotRegular) else f"cannot be read ({exc.strerror or exc})"


def _append_fd(path: Path) -> int:
    """``path`` opened to append, created 0644 if absent; never through a link (``O_NOFOLLOW``) nor blocking on a FIFO,
    and :class:`NotRegular` for anything but a regular file."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK, 0o644)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegular(f"is {filetree.kind(mode)}, not a regular file")
    return fd


def open_append(path: Path, mode: str = "ab", **kwargs: Any) -> Any:
    """``path`` opened for appending (:func:`_append_fd`); a link or anything but a regular file is refused as a
    :class:`StateError` line: a state file is never written through a link."""
    path = Path(path)
    try:
        fd = _append_fd(path)
    except NotRegular as exc:
        raise StateError(f"{path}: {exc}", hint=_WRITE_FIX) from None
    except OSError as exc:
        raise _write_refusal(path, exc) from None
    if _NONBLOCK:
        os.set_blocking(fd, True)
    return os.fdopen(fd, mode, **kwargs)


_WRITE_FIX = "cloudtrain writes its state only into regular files it creates; remove it and run again"


def _write_refusal(path: Path, exc: OSError) -> StateError:
    if exc.errno == errno.ELOOP or os.path.islink(path):
        return StateError(f"{path}: is a link (to {os.path.realpath(path)}); not written through", hint=_WRITE_FIX)
    if exc.errno == errno.ENXIO:  # a FIFO with no reader
        return StateError(f"{path}: is a FIFO, not a regular file", hint=_WRITE_FIX)
    return StateError(f"{path}: cannot be written ({exc.strerror or exc})")


@dataclass(frozen=True)
class Damage:
    """A damaged state file, returned not raised; ``line()`` says the file, what is wrong and how to recover."""

    path: Path
    problem: str
    recover: str

    def line(self) -> str:
        return f"{self.path}: {self.problem} — {self.recover}"

    def error(self) -> StateError:
        """For a command on the damaged job itself: exit 2 with :meth:`line`."""
        return StateError(f"{self.path}: {self.problem}", hint=self.recover)

    def warn(self, *, then: str | None = None) -> None:
        """For a command that goes on (``list``, ``logs`` falling back): one warning line per process."""
        _warn_once(f"warning: {self.line()}" + (f"; {then}" if then else ""))

    def to_dict(self) -> dict[str, str]:
        return {"file": str(self.path), "problem": self.problem, "recover": self.recover}


def remove_if_empty(path: Path) -> bool:
    """Remove ``path`` when it is a 0-byte file (what a kill right after creating it leaves); True if it did."""
    try:
        if Path(path).is_file() and Path(path).stat().st_size == 0:
            Path(path).unlink()
            return True
    except OSError:
        pass
    return False


class AtomicFile:
    """A temp file beside the destination, moved into place by :meth:`publish` and removed when the block ends without
    it: the one way cloudtrain replaces a file, so a kill leaves the old or the new one, never half."""

    def __init__(
        self, folder: Path, *, prefix: str, suffix: str = ".tmp", mode: str = "wb", encoding: str | None = None
    ) -> None:
        fd, self.tmp = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
        self.file = os.fdopen(fd, mode, encoding=encoding)
        self.published = False

    def publish(self, path: Path, *, fsync: bool = False, mode: int | None = None) -> None:
        """Close (after an ``fsync`` when asked), set the permission ``mode``, rename onto ``path``."""
        if not self.file.closed:
            self.file.flush()
            if fsync:
                os.fsync(self.file.fileno())
            self.file.close()
        if mode is not None:
            os.chmod(self.tmp, mode)
        os.replace(self.tmp, path)
        self.published = True

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.file.closed:
            self.file.close()
        if not self.published:
            try:
                os.unlink(self.tmp)
            except FileNotFoundError:
                pass


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (temp file in the same folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with AtomicFile(path.parent, prefix=f".{path.name}.", suffix=".tmp", mode="w", encoding="utf-8") as out:
        out.file.write(text)
        out.publish(path)


def append_line(path: Path, line: str) -> None:
    """Append ``line`` (a newline is added) in one write, holding an exclusive lock on the file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    fd = _append_fd(path)
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
    path: Path, check: Callable[[dict[str, Any]], str | None] | None = None, *, inside: Path | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for every good line of ``path``; [] when it does not exist. Bad lines (not UTF-8, JSON or
    an object, or refused by ``check``) are skipped and named in one warning; an unreadable ``path`` is one warning."""
    found, damage = scan_json_lines(path, check, inside=inside)
    if damage is not None:
        _warn_once(f"warning: {damage.path}: {damage.problem}; {damage.recover}")
    return found


def scan_json_lines(
    path: Path, check: Callable[[dict[str, Any]], str | None] | None = None, *, inside: Path | None = None
) -> tuple[list[tuple[int, dict[str, Any]]], Damage | None]:
    """(line number, object) for every good line of ``path``, and the :class:`Damage` of the bad ones (or None).
    ``inside``: the folder ``path`` must stay in (a link out of it is damage, unread)."""
    path = Path(path)
    try:
        raw = read_regular(path, inside=inside)
    except FileNotFoundError:
        return [], None
    except OSError as exc:
        return [], Damage(path, _cannot_read(exc), "its records are ignored")
    found: list[tuple[int, dict[str, Any]]] = []
    bad: list[str] = []
    for number, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        entry, problem = _parse_line(line, check)
        if problem:
            bad.append(f"{number} ({problem})")
        else:
            found.append((number, entry))
    if not bad:
        return found, None
    what = "line" if len(bad) == 1 else "lines"
    return found, Damage(path, f"skipped {what} {', '.join(bad)}", "the other records are read")


def _parse_line(line: bytes, check: Callable[[dict[str, Any]], str | None] | None) -> tuple[Any, str | None]:
    """(object, None) for a good JSON-lines line, else (None, what is wrong with it)."""
    try:
        entry = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except ValueError:
        return None, "not JSON"
    if not isinstance(entry, dict):
        return None, "not a JSON object"
    problem = check(entry) if check else None
    return (None, problem) if problem else (entry, None)


def last_json_line(
    path: Path,
    match: Callable[[dict[str, Any]], bool],
    *,
    contains: Iterable[bytes],
    check: Callable[[dict[str, Any]], str | None] | None = None,
) -> dict[str, Any] | None:
    """The newest good line of ``path`` holding one of ``contains`` that ``match`` accepts: the file is mapped and
    searched backwards with ``rfind``, parsing only the lines around a hit. A damaged candidate is one warning; other
    damage is ``read_json_lines``' to report."""
    import mmap

    needles = tuple(n for n in contains if n)
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0))  # a FIFO: no wait for a writer
        with open(fd, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise NotRegular(f"is {filetree.kind(mode)}, not a regular file")
            if os.fstat(f.fileno()).st_size == 0:
                return None
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _search_backwards(data, needles, match, check, path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        _warn_once(f"warning: {path}: {_cannot_read(exc)}; its records are ignored")
        return None


def _search_backwards(
    data: Any,
    needles: tuple[bytes, ...],
    match: Callable[[dict[str, Any]], bool],
    check: Callable[[dict[str, Any]], str | None] | None,
    path: Path,
) -> dict[str, Any] | None:
    end = len(data)
    while end > 0:
        hit = max(data.rfind(n, 0, end) for n in needles)
        if hit < 0:
            return None
        start = data.rfind(b"\n", 0, hit) + 1
        stop = data.find(b"\n", hit)
        entry, problem = _parse_line(data[start : stop if stop >= 0 else len(data)], check)
        if problem:
            _warn_once(f"warning: {path}: skipped a line ({problem}); the other records are read")
        elif match(entry):
            found: dict[str, Any] = entry
            return found
        end = start
    return None


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """A command may read a file several times; the same damage is reported once per process."""
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


RECOVER = "the file is damaged; remove it (or its run folder) and run again"


def read_json_object(path: Path, *, required: tuple[str, ...] = (), inside: Path | None = None) -> dict[str, Any]:
    """The JSON object in ``path``, which must have the ``required`` keys; else one StateError line."""
    data = load_json_object(path, required=required, inside=inside)
    if isinstance(data, Damage):
        raise data.error()
    return data


def load_json_object(
    path: Path, *, required: tuple[str, ...] = (), recover: str = RECOVER, inside: Path | None = None
) -> dict[str, Any] | Damage:
    """The JSON object in ``path`` with the ``required`` keys, or the :class:`Damage` it has (never raises).
    ``inside``: the folder ``path`` must stay in (a link out of it is damage, unread)."""
    path = Path(path)
    try:
        raw = read_regular(path, inside=inside)
    except FileNotFoundError:
        return Damage(path, "missing", recover)
    except OSError as exc:
        return Damage(path, _cannot_read(exc), recover)
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
    return Damage(path, problem, recover) if problem is not None else data
