"""What a killed cloudtrain leaves behind (temporary folders and partial files named with their pid), swept on the
next run once that process is gone or older than :data:`STALE_SECONDS`."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

STALE_SECONDS = 24 * 3600
_TEMP = re.compile(r"^cloudtrain-[a-z]+-(\d+)-[A-Za-z0-9_]+$")  # cloudtrain-<kind>-<pid>-<random>
_PART = re.compile(r"^\..+\.(\d+)\.[A-Za-z0-9_]+\.part$")  # .<stem>.<pid>.<random>.part (packaging)
PARTIAL_DIR = re.compile(r"^\.partial-.+-(\d+)$")  # .partial-<name>-<pid> (data downloads)


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_runs(pid: int, start: object = None) -> bool:
    """``pid`` runs: alive and not a zombie (ended, not yet reaped by its parent); with ``start`` (what
    :func:`process_start` said of it), also the same process, not another that reused the pid."""
    if not pid_alive(pid):
        return False
    fields = _stat_fields(pid)
    if fields is None:
        return not Path("/proc/self").is_dir()  # no /proc (macOS): what kill(0) says
    if fields[0] == "Z":
        return False
    return start is None or (len(fields) > 19 and fields[19] == str(start))


def process_start(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (None without /proc): with the pid, it names one process."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields and len(fields) > 19 else None  # field 22 of /proc/PID/stat


def process_argv(pid: int) -> list[str]:
    """``pid``'s command line (empty without /proc, or when it is gone): part of proving a process is ours."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/PID/stat`` after the command name (state first); None without it (no such process, no /proc)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None


def is_leftover(
    path: Path, pattern: re.Pattern[str], now: float | None = None, stale_seconds: float = STALE_SECONDS
) -> bool:
    """Made by a process that is gone (``pattern``'s first group is its pid), or older than ``stale_seconds``."""
    now = time.time() if now is None else now
    try:
        age = now - path.lstat().st_mtime
    except OSError:
        return False
    match = pattern.match(path.name)
    if match and int(match.group(1)) != os.getpid() and not pid_alive(int(match.group(1))):
        return True
    return age > stale_seconds


@contextlib.contextmanager
def temporary_dir(kind: str) -> Iterator[Path]:
    """A fresh ``cloudtrain-<kind>-<pid>-…`` temp folder, removed on the way out; stale ones swept first."""
    sweep_temp_dirs()
    with tempfile.TemporaryDirectory(prefix=f"cloudtrain-{kind}-{os.getpid()}-") as tmp:
        yield Path(tmp)


def sweep_temp_dirs(root: Path | None = None, *, now: float | None = None) -> list[Path]:
    """Remove the temp dir's cloudtrain folders whose process is gone (or that are stale)."""
    root = Path(root or tempfile.gettempdir())
    now = time.time() if now is None else now
    removed = []
    for path in root.glob("cloudtrain-*"):
        if _TEMP.match(path.name) and path.is_dir() and is_leftover(path, _TEMP, now):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def part_prefix(stem: str) -> str:
    """The prefix of a partial file in an output folder: ``.<stem>.<pid>.`` (mkstemp adds the rest)."""
    return f".{stem}.{os.getpid()}."


def sweep_part_files(folder: Path, *, now: float | None = None, stale_seconds: float = 3600) -> list[Path]:
    """Remove ``.part`` files in ``folder`` whose writer is gone, or that are older than ``stale_seconds``."""
    now = time.time() if now is None else now
    removed = []
    for path in Path(folder).glob(".*.part"):
        if is_leftover(path, _PART, now, stale_seconds):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed
