"""A local folder's content, hashed: relative paths, sizes and file hashes, and one digest.

The digest names the folder's upload prefix, so two submits of the same content share one
upload and any change makes a new prefix. Re-hashing a large folder on every submit would
be slow: hashes are remembered per file by (size, mtime, inode) in a small cache file.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from cloudtrain.errors import UsageError
from cloudtrain.statefiles import write_atomic

_BLOCK = 2**20


@dataclass(frozen=True)
class FileEntry:
    path: str  # relative, with "/" separators
    size: int
    sha256: str


@dataclass(frozen=True)
class Manifest:
    root: Path
    files: tuple[FileEntry, ...]  # sorted by path

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def to_json(self) -> str:
        """The canonical form the digest is taken over (no root: the same content anywhere is the same)."""
        return json.dumps({"files": [[f.path, f.size, f.sha256] for f in self.files]}, separators=(",", ":"))

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def build_manifest(folder: Path, *, hash_cache: Path | None = None) -> Manifest:
    """Every regular file under ``folder``, links followed only where they stay inside it.

    Anything that would read outside the folder or cannot be an object is refused in one
    line naming it, before a byte is hashed: a link whose target is outside the folder (or
    missing), a device, FIFO or socket, a name with a line break."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"data folder {folder} does not exist or is not a folder")
    files, refused = _walk(folder)
    if refused:
        shown = "; ".join(refused[:5]) + (f"; and {len(refused) - 5} more" if len(refused) > 5 else "")
        raise UsageError(
            f"data folder {folder}: {shown}",
            hint="only files inside the folder are uploaded: copy them in or remove these",
        )
    known = _load(hash_cache)
    seen: dict[str, list] = {}
    entries = []
    for path, st in files:
        key = str(path.resolve())
        stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
        cached = known.get(key)
        sha = cached[3] if cached and cached[:3] == stamp else file_sha256(path)
        seen[key] = [*stamp, sha]
        entries.append(FileEntry(path.relative_to(folder).as_posix(), st.st_size, sha))
    if not entries:
        raise UsageError(f"data folder {folder} holds no files", hint="point the channel at the folder with the data")
    _save(hash_cache, seen)
    return Manifest(folder, tuple(sorted(entries, key=lambda f: f.path)))


def _walk(folder: Path) -> tuple[list[tuple[Path, os.stat_result]], list[str]]:
    """(the regular files with their stat, what is refused) under ``folder``. A link to a folder
    inside it is walked like a folder, unless it leads back to a folder it is inside (a loop)."""
    root = folder.resolve()
    files, refused = [], []
    chains = {str(folder): {root}}  # each folder walked → the real folders on its way from the root
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
        chain = chains.pop(dirpath)
        dirnames.sort()
        for name in list(dirnames):
            path = Path(dirpath, name)
            problem = _entry_problem(path, name, root)
            target = path.resolve()
            if problem is None and target in chain:
                problem = f"{path} is a link to {target}, a folder it is inside (a loop)"
            if problem:
                dirnames.remove(name)
                refused.append(problem)
            else:
                chains[str(path)] = chain | {target}
        for name in sorted(filenames):
            path = Path(dirpath, name)
            problem = _entry_problem(path, name, root)
            if problem is None:
                st = path.stat()
                if stat.S_ISREG(st.st_mode):
                    files.append((path, st))
                    continue
                problem = f"{_shown(path)} is not a regular file (a device, FIFO or socket)"
            refused.append(problem)
    return files, refused


def _entry_problem(path: Path, name: str, root: Path) -> str | None:
    if "\n" in name or "\r" in name:
        return f"{_shown(path)} has a line break in its name"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # bytes the file system gave that are not UTF-8 (surrogate escapes)
        raw = os.fsencode(name)
        bad = raw[_first_bad_byte(raw)]
        return (
            f"{ascii(str(path))} has a name that is not UTF-8 (byte 0x{bad:02x}); bucket keys and the "
            "job's file names are UTF-8: rename it"
        )
    if not path.is_symlink():
        return None
    target = path.resolve()
    if not target.exists():
        return f"{_shown(path)} is a link to {os.readlink(path)}, which does not exist"
    if not target.is_relative_to(root):
        return f"{_shown(path)} is a link to {target}, outside the folder"
    return None


def _first_bad_byte(raw: bytes) -> int:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return 0


def _shown(path: Path) -> str:
    return repr(str(path)) if any(c in str(path) for c in "\n\r") else str(path)


def _load(cache: Path | None) -> dict[str, list]:
    if cache is None or not cache.is_file():
        return {}
    try:
        data = json.loads(cache.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(cache: Path | None, seen: dict[str, list]) -> None:
    if cache is None:
        return
    try:
        write_atomic(cache, json.dumps(seen))
    except OSError:
        pass  # only a speed-up
