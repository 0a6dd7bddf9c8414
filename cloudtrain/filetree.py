"""The one reader of a run folder's files, here or on a cluster (``python3 -c <this file> list ROOT`` over ssh):
standard library only, Python 3.8.

:func:`list_tree` lists the regular files under ``root`` and names in one line each what it skipped (a link out of
``root``, a linked folder, a FIFO or device). :func:`read_range` opens a listed file after the same checks, without
following a last link or blocking."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from typing import Any

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def kind(mode: int) -> str:
    for test, words in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return words
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"


def within(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _safe(root: str, rel: str) -> tuple[str, os.stat_result]:
    """The real path of ``root/rel`` and its status; OSError (one line) for what is not read."""
    real = os.path.realpath(os.path.join(root, rel))
    if not within(real, os.path.realpath(root)):
        raise OSError(f"{rel} is a link to {real}, outside {root}: not read")
    try:
        found = os.stat(real)
    except OSError:  # a dangling link, or a file removed since it was listed
        gone = f"a link to {real}, which does not exist" if os.path.islink(os.path.join(root, rel)) else "gone"
        raise OSError(f"{rel} is {gone}: not read") from None
    if not stat.S_ISREG(found.st_mode):
        raise OSError(f"{rel} is {kind(found.st_mode)}: skipped")
    return real, found


def list_tree(root: str, skip: Iterable[str] = ()) -> tuple[list[list[Any]], list[str]]:
    """``(files, notes)``: ``[rel, size, mode]`` of each regular file under ``root`` (``/`` separators,
    sorted; folders named in ``skip`` left out), and one line for each entry not listed."""
    files, notes = [], []
    for folder, dirs, names in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        prefix = "" if rel_folder == "." else rel_folder.replace(os.sep, "/") + "/"
        kept = []
        for name in sorted(dirs):
            if prefix + name in skip:
                continue
            if os.path.islink(os.path.join(folder, name)):
                notes.append(f"{prefix}{name} is a link to a folder: not followed")
            else:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(names):
            try:
                found = _safe(root, prefix + name)[1]
            except OSError as exc:
                notes.append(str(exc))
                continue
            files.append([prefix + name, found.st_size, stat.S_IMODE(found.st_mode)])
    return files, notes


def read_range(root: str, rel: str, start: int, length: int | None) -> Iterator[bytes]:
    """Up to ``length`` bytes (None: all) of listed file ``rel`` from ``start``; OSError for what is unlisted."""
    real = _safe(root, rel)[0]
    fd = os.open(real, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since the check
            raise OSError(f"{rel} is {kind(os.fstat(fd).st_mode)}: skipped")
        f.seek(start)
        while length is None or length > 0:
            block = f.read(8 << 20 if length is None else min(8 << 20, length))
            if not block:
                return
            if length is not None:
                length -= len(block)
            yield block


def main(argv: list[str]) -> int:
    """``list ROOT`` prints ``{"files": …, "notes": …}``; ``read ROOT REL START LENGTH`` writes the bytes."""
    if argv[0] == "list":
        files, notes = list_tree(argv[1]) if os.path.isdir(argv[1]) else ([], [])
        sys.stdout.write(json.dumps({"files": files, "notes": notes}))
        return 0
    try:
        for block in read_range(argv[1], argv[2], int(argv[3]), int(argv[4])):
            sys.stdout.buffer.write(block)
    except OSError as exc:
        sys.stderr.write(f"{exc}\n")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
