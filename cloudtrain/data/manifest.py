"""A local folder's content, hashed: relative paths, sizes and file hashes, and one digest.

The digest names the folder's upload prefix, so two submits of the same content share one
upload and any change makes a new prefix. Re-hashing a large folder on every submit would
be slow: hashes are remembered per file by (size, mtime, inode) in a small cache file.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from cloudtrain.errors import UsageError

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
    """Every regular file under ``folder`` (symlinks followed to files, not into folders)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"data folder {folder} does not exist or is not a folder")
    known = _load(hash_cache)
    seen: dict[str, list] = {}
    entries = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath, name)
            try:
                st = path.stat()
            except OSError:
                continue  # a dangling link
            if not path.is_file():
                continue
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
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}")
        tmp.write_text(json.dumps(seen))
        os.replace(tmp, cache)
    except OSError:
        pass  # only a speed-up
