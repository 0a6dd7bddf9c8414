"""What a job produced, listed and downloaded: ``cloudtrain outputs JOB [--download DIR]``. Each file goes to
``<name>.cloudtrain-partial`` and is renamed once its size and checksum match, so a download resumes; a different file
at the destination is overwritten only with ``force``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cloudtrain.backends.base import JobHandle
from cloudtrain.backends.files import PARTIAL, Folder, Locked, StoredFile, checksum_matches, landing, write_file
from cloudtrain.errors import UsageError
from cloudtrain.text.numbers import size

__all__ = ["PARTIAL", "download", "list_outputs"]

#: ``(bytes done, bytes in all, the file being fetched)`` as a download goes
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Output:
    """One file a job produced: its path in the listing (under its part when there are several)."""

    path: str
    file: StoredFile
    folder: Folder
    part: str

    @property
    def size(self) -> int:
        """Its size in bytes."""
        return self.file.size

    @property
    def checksum(self) -> tuple[str, str] | None:
        """The store's checksum, ``("md5", hex)`` or ``("crc32c", base64)``, where the store gives one."""
        return self.file.checksum

    def to_dict(self) -> dict[str, Any]:
        checksum = {self.file.checksum[0]: self.file.checksum[1]} if self.file.checksum else {}
        return {"path": self.path, "size": self.file.size, "source": self.folder.uri, **checksum}


@dataclass(frozen=True)
class Listing:
    """What a job produced: its files (``path``, ``size``), where each part is, and whether it still runs."""

    job_id: str
    files: list[Output]
    sources: dict[str, str]  # part → where it is
    running: bool
    notes: list[str] = field(default_factory=list)  # what was not listed and why (a link out, a FIFO), a line each

    @property
    def total_bytes(self) -> int:
        return sum(o.file.size for o in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "running": self.running,
            "sources": self.sources,
            "total_bytes": self.total_bytes,
            "files": [o.to_dict() for o in self.files],
            "not_listed": self.notes,
        }


@dataclass(frozen=True)
class Downloaded:
    dest: Path
    fetched: list[str]
    kept: list[str]  # already there, the same size and checksum
    bytes: int  # bytes read from the store (a resumed file: only what its partial file lacked)


def list_outputs(handle: JobHandle) -> Listing:
    """Every file under the job's output folders; one line when they are gone."""
    files = handle.files()
    if files.gone:
        raise UsageError(f"job {handle.job_id}: {files.gone}", hint="its outputs are no longer kept")
    found: list[Output] = []
    notes: list[str] = []
    several = len(files.outputs) > 1
    for part, folder in files.outputs.items():
        found += [Output(f"{part}/{f.path}" if several else f.path, f, folder, part) for f in folder.list()]
        notes += [f"{folder.uri}: {note}" for note in folder.notes]
    if not found and not files.running:
        where = ", ".join(folder.uri for folder in files.outputs.values()) or "no output folder"
        raise UsageError(f"job {handle.job_id}: its outputs are gone ({where} holds nothing)")
    return Listing(handle.job_id, found, {part: f.uri for part, f in files.outputs.items()}, files.running, notes)


def download(listing: Listing, dest: Path, *, force: bool = False, progress: Progress | None = None) -> Downloaded:
    """Fetch every file of ``listing`` into ``dest`` (locked; partial files resumed) through the one writer, refusing
    before any fetch to overwrite a different file unless ``force``."""
    with Locked(dest):
        plan = [(output, landing(dest, output.path)) for output in listing.files]
        if not force:
            for output, target in plan:
                if target.is_file() and not _same(target, output):
                    raise UsageError(
                        f"{target} already exists and differs from {_where(output)} "
                        f"({size(target.stat().st_size)} here, {size(output.file.size)} there)",
                        hint="pass --force to overwrite it, or download into another folder",
                    )
        total, done, moved = listing.total_bytes, 0, 0
        fetched, kept = [], []
        for output, target in plan:
            if target.is_file() and not target.is_symlink() and _same(target, output):
                kept.append(output.path)
                done += output.file.size
                continue

            def step(n: int, path: str = output.path, base: int = done) -> None:
                if progress:
                    progress(base + n, total, path)

            moved += _fetch(output, dest, step)
            done += output.file.size
            fetched.append(output.path)
    return Downloaded(dest, fetched, kept, moved)


def _where(output: Output) -> str:
    return f"{output.folder.uri.rstrip('/')}/{output.file.path}"


def _same(target: Path, output: Output) -> bool:
    file = output.file
    return target.stat().st_size == file.size and not _mismatch(target, output)


def _mismatch(path: Path, output: Output) -> bool:
    """The file here is not the store's by its checksum (one the store vouches for)."""
    return checksum_matches(path, output.file.checksum) is False and output.folder.checksum_trusted(output.file.path)


def _fetch(output: Output, dest: Path, progress: Callable[[int], Any]) -> int:
    """One file, through its partial file; the bytes read from the store."""
    file = output.file
    kind = file.checksum[0] if file.checksum else ""

    def check(path: Path) -> str | None:
        return f"the downloaded file's {kind} checksum does not match the store's" if _mismatch(path, output) else None

    return write_file(
        dest,
        output.path,
        lambda have: output.folder.read(file.path, have, file.size),
        size=file.size,
        mode=file.mode,
        check=check,
        progress=progress,
    )
