"""What cloudtrain keeps in its cache folder, how big it is, and pruning ``packages/`` and ``envs/`` to the last N used
(with the bases a kept environment stands on); history, data and the upload journal are never pruned."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from cloudtrain.history import cache_dir

PRUNED = ("packages", "envs")
MARKER = "cloudtrain-env.json"


@dataclass(frozen=True)
class Entry:
    path: Path
    size: int
    last_used: float


def size_of(path: Path) -> int:
    """Bytes on disk under ``path``, links not followed."""
    try:
        if not path.is_dir() or path.is_symlink():
            return path.lstat().st_size
    except OSError:
        return 0
    total = 0
    for root, dirs, files in os.walk(path, onerror=lambda _: None):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def entries(folder: Path) -> list[Entry]:
    """The visible entries of ``folder``, most recently used first."""
    found = []
    try:
        children = [p for p in Path(folder).iterdir() if not p.name.startswith(".")]
    except OSError:
        return []
    for path in children:
        found.append(Entry(path, size_of(path), _last_used(path)))
    return sorted(found, key=lambda e: (e.last_used, e.path.name), reverse=True)


def _last_used(path: Path) -> float:
    try:
        newest = path.lstat().st_mtime
    except OSError:
        return 0.0
    if path.is_dir() and not path.is_symlink():
        try:
            for child in path.iterdir():
                if child.is_file() and not child.is_symlink():
                    newest = max(newest, child.lstat().st_mtime)
        except OSError:
            pass
    return newest


def usage(root: Path | None = None) -> list[tuple[str, int, int]]:
    """(name, entries, bytes) for each top-level item of the cache, biggest first."""
    root = Path(root or cache_dir())
    rows = []
    try:
        items = sorted(root.iterdir())
    except OSError:
        return []
    for item in items:
        count = len(entries(item)) if item.is_dir() else 1
        rows.append((item.name, count, size_of(item)))
    return sorted(rows, key=lambda r: (-r[2], r[0]))


def prune(keep: int, root: Path | None = None, *, dry_run: bool = False) -> list[Entry]:
    """Remove all but the ``keep`` most recently used packages and environments; what went (or would go)."""
    root = Path(root or cache_dir())
    removed = []
    for name in PRUNED:
        listed = entries(root / name)
        named = _bases(listed[:keep], root / name)
        for entry in listed[keep:]:
            if entry.path.name in named:
                continue
            removed.append(entry)
            if not dry_run:
                _remove(entry.path)
    return removed


def _bases(kept: list[Entry], folder: Path) -> set[str]:
    """What the kept environments stand on, all the way down (package layer → requirements layer → image layer)."""
    named: set[str] = set()
    todo = [e.path for e in kept]
    while todo:
        base = _base_of(todo.pop())
        if base is not None and base not in named:
            named.add(base)
            todo.append(folder / base)
    return named


def _base_of(path: Path) -> str | None:
    """The environment an environment is layered on, as its marker names it."""
    try:
        base = json.loads((path / MARKER).read_text()).get("image")
    except (OSError, ValueError, AttributeError):
        return None
    return base if isinstance(base, str) else None


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
