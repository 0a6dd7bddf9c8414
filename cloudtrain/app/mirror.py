"""A remote folder kept as a local copy for ``cloudtrain tensorboard``, moving only what is new: event files only grow,
so only the bytes past the copy's end are read; a file that got shorter is fetched whole."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cloudtrain.backends.files import Folder, Locked, landing, write_file


@dataclass
class SyncCounts:
    list_calls: int = 0
    read_calls: int = 0  # ranged reads (one per chunk of a file)
    bytes: int = 0  # bytes moved from the store
    files: int = 0  # files new or grown, per sync summed


class Mirror:
    """``folder`` copied into ``dest``; :meth:`sync` brings the copy up to date."""

    def __init__(self, folder: Folder, dest: Path):
        self.folder, self.dest = folder, dest
        self.counts = SyncCounts()

    def sync(self) -> int:
        """One listing, then the new bytes of each new or grown file, written by the one writer
        (:func:`~cloudtrain.backends.files.write_file`: never through a link, never outside ``dest``)."""
        listed = self.folder.list()
        self.counts.list_calls += 1
        moved = 0
        with Locked(self.dest, wait=True):  # two boards over one job share its copy
            for found in listed:
                target = landing(self.dest, found.path)
                if target.is_file() and not target.is_symlink() and target.stat().st_size == found.size:
                    continue

                def read(start: int, path: str = found.path, size: int = found.size) -> Iterator[bytes]:
                    for block in self.folder.read(path, start, size):
                        self.counts.read_calls += 1
                        yield block

                moved += write_file(self.dest, found.path, read, size=found.size, partial=False)
                self.counts.files += 1
        self.counts.bytes += moved
        return moved
