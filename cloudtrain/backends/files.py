"""What a job wrote, wherever it is: a folder of files that can be listed and read from an offset.

Every backend keeps a job's outputs somewhere else: a local run's folder, a Slurm run folder on
the cluster (read over the login node's connection), a ``gs://`` or ``s3://`` prefix. A job
handle's ``files()`` names them as :class:`JobFiles`: its output folders (model, checkpoints, the
user's files, per-replica logs) and where its TensorBoard event files are. :class:`Folder` is all
the app layer needs of each (``cloudtrain outputs``, ``cloudtrain tensorboard``): one listing,
and the bytes of one file from an offset, so a download resumes and a growing event file is
fetched by its new bytes only.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

CHUNK = 8 * 2**20  # one read of a remote file: progress, and where an interrupted download resumes


@dataclass(frozen=True)
class StoredFile:
    """One file of a folder: its path under the folder (``/`` separators), size and the store's checksum."""

    path: str
    size: int
    checksum: tuple[str, str] | None = None  # ("md5", hex) or ("crc32c", base64), where the store gives one


class Folder(Protocol):
    @property
    def uri(self) -> str: ...  # where it is, as a person reads it (a path, gs://…, login:/path)

    @property
    def local_path(self) -> Path | None: ...  # the folder on this machine (read in place), None: remote

    def list(self) -> list[StoredFile]:
        """Every file under the folder, at any depth; empty when it is absent (one listing call)."""
        ...

    def read(self, path: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """The bytes of ``path`` from ``start`` to ``end`` (None: its end), in chunks."""
        ...

    def checksum_trusted(self, path: str) -> bool:
        """Whether the listed checksum of ``path`` is its content's (asked only when one does not match:
        an S3 ETag is no MD5 of an object KMS encrypts)."""
        ...


@dataclass(frozen=True)
class JobFiles:
    """Where a job's files are: its output folders by name, and its TensorBoard event files."""

    outputs: Mapping[str, Folder]  # "output", "checkpoints", … → the folder; empty: none
    tensorboard: Folder | None = None
    #: Why there is no ``tensorboard`` folder (one line for the user), when there is none
    no_tensorboard: str | None = None
    running: bool = False  # the job is still running: what exists so far
    gone: str | None = field(default=None)  # a job whose outputs the platform no longer keeps: why


class LocalFolder:
    """A folder on this machine (a local run's output folder)."""

    def __init__(self, path: str | Path, *, skip: tuple[str, ...] = ()):
        self.path = Path(path)
        self.skip = skip  # names of sub-folders that are no output (another part lists them)

    @property
    def uri(self) -> str:
        return str(self.path)

    @property
    def local_path(self) -> Path | None:
        return self.path

    def list(self) -> list[StoredFile]:
        out = []
        for folder, dirs, files in os.walk(self.path):
            here = Path(folder)
            dirs[:] = sorted(d for d in dirs if (here / d).relative_to(self.path).as_posix() not in self.skip)
            for name in sorted(files):
                try:
                    size = (here / name).stat().st_size
                except OSError:  # removed while listed
                    continue
                out.append(StoredFile((here / name).relative_to(self.path).as_posix(), size))
        return out

    def checksum_trusted(self, path: str) -> bool:
        return True  # none is listed

    def read(self, path: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        with open(self.path / path, "rb") as f:
            f.seek(start)
            left = None if end is None else end - start
            while left is None or left > 0:
                block = f.read(CHUNK if left is None else min(CHUNK, left))
                if not block:
                    return
                if left is not None:
                    left -= len(block)
                yield block


class Bucket(Protocol):
    """What :class:`BucketFolder` needs of a store (:mod:`cloudtrain.data.stores`)."""

    scheme: str
    bucket: str

    def list(self, prefix: str) -> list[Any]: ...

    def read(self, key: str, start: int, end: int) -> bytes: ...

    def checksum_is_md5(self, key: str) -> bool: ...


class BucketFolder:
    """A ``gs://`` or ``s3://`` prefix, over a store a backend made with its own client and credentials."""

    def __init__(self, store: Bucket, prefix: str, *, skip: tuple[str, ...] = ()):
        self.store = store
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.skip = tuple(s.strip("/") + "/" for s in skip)
        self.sizes: dict[str, int] = {}  # each file's size at the last listing: where a read ends
        self.list_calls = 0

    @property
    def uri(self) -> str:
        return f"{self.store.scheme}://{self.store.bucket}/{self.prefix}"

    @property
    def local_path(self) -> Path | None:
        return None

    def list(self) -> list[StoredFile]:
        self.list_calls += 1
        out = []
        for found in self.store.list(self.prefix):
            rel = found.name[len(self.prefix) :]
            if not rel or rel.endswith("/") or rel.startswith(self.skip):  # placeholders hold nothing
                continue
            out.append(StoredFile(rel, found.size, getattr(found, "checksum", None)))
        self.sizes = {f.path: f.size for f in out}
        return sorted(out, key=lambda f: f.path)

    def checksum_trusted(self, path: str) -> bool:
        return self.store.checksum_is_md5(self.prefix + path)

    def read(self, path: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        stop = self.sizes.get(path) if end is None else end
        if stop is None:  # not listed yet: list first
            self.list()
            stop = self.sizes.get(path, 0)
        while start < stop:
            upto = min(stop, start + CHUNK)
            block = self.store.read(self.prefix + path, start, upto)
            if not block:
                return
            start += len(block)
            yield block


def file_md5(path: Path) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()


def checksum_matches(path: Path, checksum: tuple[str, str] | None) -> bool | None:
    """Whether the file here has the store's checksum; None: the store gives none (or one this
    machine cannot compute)."""
    if checksum is None:
        return None
    kind, value = checksum
    if kind == "md5":
        return file_md5(path) == value
    if kind == "crc32c":
        try:
            import base64

            import google_crc32c
        except ImportError:
            return None
        crc = google_crc32c.Checksum()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(2**20), b""):
                crc.update(block)
        return base64.b64encode(crc.digest()).decode() == value
    return None
