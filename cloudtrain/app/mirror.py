"""A remote folder kept as a copy on this machine, moving only what is new: ``cloudtrain tensorboard``.

TensorBoard reads event files from a local folder, so it needs no cloud filesystem plugin. Event
files only ever grow (TensorFlow appends records): one listing per :meth:`Mirror.sync` tells which
files are new or longer than the copy, and only the bytes past the copy's end are read (a ranged
read); a file that got shorter was rewritten and is fetched again whole. The counters
(:class:`SyncCounts`) are what bench/ measures.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cloudtrain.backends.files import Folder
from cloudtrain.errors import UsageError


@dataclass
class SyncCounts:
    list_calls: int = 0
    read_calls: int = 0  # ranged reads (one per chunk of a file)
    bytes: int = 0  # bytes moved from the store
    files: int = 0  # files new or grown, per sync summed


def inside(root: Path, rel: str) -> Path:
    """``root/rel``, refusing a name that climbs out of ``root`` (a hostile or odd object name)."""
    target = (root / rel).resolve()
    if target != root.resolve() and root.resolve() not in target.parents:
        raise UsageError(f"refusing the file name {rel!r}: it points outside {root}", hint="rename the object")
    return target


class Mirror:
    """``folder`` copied into ``dest``; :meth:`sync` brings the copy up to date."""

    def __init__(self, folder: Folder, dest: Path):
        self.folder, self.dest = folder, dest
        self.counts = SyncCounts()

    def sync(self) -> int:
        """One listing, then the new bytes of each new or grown file; the bytes moved."""
        self.dest.mkdir(parents=True, exist_ok=True)
        listed = self.folder.list()
        self.counts.list_calls += 1
        moved = 0
        for found in listed:
            target = inside(self.dest, found.path)
            have = target.stat().st_size if target.is_file() else 0
            if found.size == have:
                continue
            start = have if found.size > have else 0  # shorter: rewritten, fetch it whole
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "ab" if start else "wb") as out:
                for block in self.folder.read(found.path, start, found.size):
                    out.write(block)
                    self.counts.read_calls += 1
                    moved += len(block)
            self.counts.files += 1
        self.counts.bytes += moved
        return moved
