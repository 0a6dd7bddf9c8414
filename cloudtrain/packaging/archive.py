"""A reproducible ``.tar.gz``, written atomically and named by its content hash: same members in, same bytes out
(sorted entries, :data:`FIXED_MTIME`, owner 0, modes 0o755/0o644, PAX UTF-8, gzip time 0), written to a hidden ``.part``
and renamed into place; stale ``.part`` files are swept before each build."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

from cloudtrain.errors import PackagingError
from cloudtrain.leftovers import part_prefix, sweep_part_files
from cloudtrain.statefiles import AtomicFile

#: 1980-01-01T00:00:00Z, the earliest a ZIP holds, so a wheel built from the sdist never fails on it.
FIXED_MTIME = 315532800
COMPRESSLEVEL = 9


@dataclass(frozen=True)
class Member:
    """One file of the archive: generated ``data``, or bytes read through ``open``."""

    name: str  # posix path inside the archive
    data: bytes | None = None
    open: Callable[[], BinaryIO] | None = None
    executable: bool = False


def reader(path: Path | str) -> Callable[[], BinaryIO]:
    """A member's ``open``: the file at ``path``, read as bytes when the archive is written."""
    return lambda: open(path, "rb")


@dataclass(frozen=True)
class Written:
    path: Path
    sha256: str
    size: int


def write_archive(out_dir: Path, stem: str, members: Iterable[Member]) -> Written:
    """Write ``members`` as ``out_dir/{stem}-{sha256[:12]}.tar.gz``; folders are implied."""
    out_dir = Path(out_dir)
    members = sorted(members, key=lambda m: m.name.split("/"))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        sweep_part_files(out_dir)
        part = AtomicFile(out_dir, prefix=part_prefix(stem), suffix=".part")
    except OSError as e:
        raise PackagingError(
            f"cannot write the package to {out_dir}: {e.strerror or e}",
            "choose an output folder you can write to",
        ) from e
    try:
        with part:
            sink = _HashingWriter(part.file)
            with gzip.GzipFile(filename="", mode="wb", fileobj=sink, mtime=0, compresslevel=COMPRESSLEVEL) as gz:
                with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar:
                    _write_members(tar, members)
            digest = sink.hash.hexdigest()
            final = out_dir / f"{stem}-{digest[:12]}.tar.gz"
            part.publish(final, fsync=True, mode=0o644)
    except _SourceError as e:
        raise PackagingError(str(e), "check that nothing changes the package folder while it is built") from e
    except OSError as e:
        raise PackagingError(
            f"cannot write the package to {out_dir}: {e.strerror or e}",
            "check the free space and permissions of the output folder",
        ) from e
    return Written(final, digest, sink.size)


class _SourceError(OSError):
    """Reading a member's source failed."""


class _HashingWriter(io.RawIOBase):
    """Passes bytes through to ``raw`` and hashes them on the way."""

    def __init__(self, raw: IO[bytes]):
        self.raw, self.hash, self.size = raw, hashlib.sha256(), 0

    def writable(self) -> bool:
        return True

    def write(self, b: ReadableBuffer) -> int:
        self.hash.update(b)
        written = memoryview(b).nbytes  # gzip hands over bytes: their length
        self.size += written
        self.raw.write(b)
        return written


def _info(name: str, *, is_dir: bool = False, size: int = 0, executable: bool = False) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE if is_dir else tarfile.REGTYPE
    info.mode = 0o755 if is_dir or executable else 0o644
    info.size = size
    info.mtime = FIXED_MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _write_members(tar: tarfile.TarFile, members: list[Member]) -> None:
    folders_done: set[str] = set()
    for member in members:
        parts = member.name.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder not in folders_done:
                folders_done.add(folder)
                tar.addfile(_info(folder, is_dir=True))
        if member.data is not None:
            tar.addfile(
                _info(member.name, size=len(member.data), executable=member.executable), io.BytesIO(member.data)
            )
            continue
        assert member.open is not None, "a Member needs data or open"
        try:
            with member.open() as f:
                size = os.fstat(f.fileno()).st_size  # at open time, not at the earlier walk
                tar.addfile(_info(member.name, size=size, executable=member.executable), f)
        except OSError as e:
            raise _SourceError(f"cannot read {getattr(e, 'filename', None) or member.name}: {e.strerror or e}") from e
