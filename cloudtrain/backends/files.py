"""What a job wrote, wherever it is: a folder of files that can be listed and read from an offset.

A job handle's ``files()`` names its outputs (a local folder, a Slurm run folder, a ``gs://`` or ``s3://`` prefix)
as :class:`JobFiles`. :class:`Folder` is all the app layer needs of each: one listing and the bytes of one file
from an offset, so a download resumes and a growing event file is fetched by its new bytes only. Every file lands
here through :func:`write_file`, into a folder :class:`Locked` against a second writer."""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cloudtrain import filetree as tree
from cloudtrain.errors import BackendError, UsageError

CHUNK = 8 * 2**20  # one read of a remote file: progress, and where an interrupted download resumes


@dataclass(frozen=True)
class StoredFile:
    """One file of a folder: its path under the folder (``/`` separators), size and the store's checksum."""

    path: str
    size: int
    checksum: tuple[str, str] | None = None  # ("md5", hex) or ("crc32c", base64), where the store gives one
    mode: int | None = None  # its permission bits, where the store keeps them (a folder here, a cluster's)


class Folder(Protocol):
    notes: list[str]  # what the last listing left out and why, one line each (a link out, a FIFO)

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
    """A folder on this machine (a local run's output folder), listed and read by :mod:`~cloudtrain.filetree`."""

    def __init__(self, path: str | Path, *, skip: tuple[str, ...] = ()):
        self.path = Path(path)
        self.skip = skip  # names of sub-folders that are no output (another part lists them)
        self.notes: list[str] = []

    @property
    def uri(self) -> str:
        return str(self.path)

    @property
    def local_path(self) -> Path | None:
        return self.path

    def list(self) -> list[StoredFile]:
        found, self.notes = tree.list_tree(str(self.path), self.skip) if self.path.is_dir() else ([], [])
        return [StoredFile(rel, size, mode=mode) for rel, size, mode in found]

    def checksum_trusted(self, path: str) -> bool:
        return True  # none is listed

    def read(self, path: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        try:
            yield from tree.read_range(str(self.path), path, start, None if end is None else end - start)
        except OSError as exc:
            raise UsageError(f"{self.path}: {exc.strerror or exc}") from None


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
        self.notes: list[str] = []
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


#: The suffix of a file being downloaded: renamed into place once whole, resumed from its end if interrupted.
PARTIAL = ".cloudtrain-partial"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)  # neither a link nor a FIFO is opened


def landing(root: Path, rel: str) -> Path:
    """``root/rel`` for writing, its folders made: refuses a name that climbs out of ``root`` and a folder
    on the way that is a link (what is written stays under ``root``)."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        raise UsageError(f"refusing the file name {rel!r}: it points outside {root}", hint="rename the object")
    here = root
    for part in parts[:-1]:
        here = here / part
        try:
            os.mkdir(here)
        except FileExistsError:
            if os.path.islink(here) or not here.is_dir():
                raise UsageError(
                    f"{here} is {'a link' if os.path.islink(here) else 'not a folder'}: not written through",
                    hint="remove it, or download into another folder",
                ) from None
    return root.joinpath(*parts)


class Locked:
    """``root`` held by this process for writing (``flock`` on ``root/.cloudtrain-lock``): a second download
    into the same folder is one line at once; ``wait``: it waits for the first (a refresh)."""

    def __init__(self, root: Path, *, wait: bool = False):
        root.mkdir(parents=True, exist_ok=True)
        self.path, self.wait = root / ".cloudtrain-lock", wait
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(self.fd)
            raise UsageError(
                f"another download into {root} is running", hint="wait for it, or pick another folder"
            ) from None

    def __enter__(self) -> Locked:
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.wait:  # a download leaves no lock file behind (a refresh's cache keeps its own)
            os.unlink(self.path)
        os.close(self.fd)


def _open_for_writing(path: Path, size: int, private: bool) -> tuple[int, int]:
    """``(fd, bytes already there)``: ``path`` opened to append without following a link, or created
    exclusively (``private``: 0600 until it is whole and given its mode; else the umask's); what is there
    but is not a regular file is one line."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600 if private else 0o666)
        return fd, 0
    except FileExistsError:
        pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | _NOFOLLOW)
    except OSError as exc:
        if os.path.islink(path) or not stat.S_ISREG(os.lstat(path).st_mode):
            what = "a link" if os.path.islink(path) else tree.kind(os.lstat(path).st_mode)
            raise UsageError(
                f"{path} is {what}, not a file cloudtrain wrote: not written through",
                hint="remove it and run the same command again",
            ) from None
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    have = os.fstat(fd).st_size
    if have > size:  # the source was rewritten smaller since: start over
        os.ftruncate(fd, 0)
        have = 0
    return fd, have


def write_file(
    root: Path,
    rel: str,
    read: Callable[[int], Iterable[bytes]],
    *,
    size: int,
    mode: int | None = None,
    partial: bool = True,
    check: Callable[[Path], str | None] | None = None,
    progress: Callable[[int], Any] | None = None,
) -> int:
    """The one writer of a job's files on this machine: ``rel`` under ``root`` from ``read(offset)``'s blocks,
    appended to what is there (a partial file, or with ``partial=False`` the growing copy itself), never through
    a link, given ``mode`` (None: the umask's) and, via a partial file, renamed into place after ``check`` (a
    problem in one line, or None). Returns the bytes read."""
    target = landing(root, rel)
    path = target.with_name(target.name + PARTIAL) if partial else target
    fd, have = _open_for_writing(path, size, private=mode is not None)
    try:
        got = have
        for block in read(have):
            view = memoryview(block)
            while view:
                view = view[os.write(fd, view) :]
            got += len(block)
            if progress:
                progress(got)
        written = os.fstat(fd)
        if written.st_size != size:
            raise BackendError(
                f"{rel}: got {written.st_size} bytes of {size}", hint="run the same command again: it resumes"
            )
        wrong = check(path) if check else None
        if wrong:
            os.unlink(path)
            raise BackendError(f"{rel}: {wrong}", hint="run the same command again")
        if mode is not None:
            os.fchmod(fd, mode & 0o777)
        now = os.lstat(path)
        if (now.st_ino, now.st_dev) != (written.st_ino, written.st_dev):  # swapped while written
            raise UsageError(f"{path} was replaced while it was written: not renamed into place")
        if partial:
            if os.path.isdir(target) and not os.path.islink(target):
                raise UsageError(f"{target} is a folder: the file is kept as {path.name}", hint="remove the folder")
            os.replace(path, target)
    finally:
        os.close(fd)
    return size - have
