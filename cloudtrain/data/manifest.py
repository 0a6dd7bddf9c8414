"""A local folder's content hashed (paths, sizes, file hashes) into the digest that names its upload prefix. File hashes
are remembered by (size, mtime, inode), so a large folder is not re-hashed on every submit."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cloudtrain.errors import UsageError
from cloudtrain.packaging.ignore import is_ignored, parse_ignore_lines  # --include: one syntax for both
from cloudtrain.secrets.files import SNIFF_BYTES, credential_content, credential_name, home_markers
from cloudtrain.statefiles import write_atomic

_BLOCK = 2**20
PREFIX = "cloudtrain/data"  # below a staging bucket's own path: data/upload.py's layout


def data_prefix(staging_path: str, digest: str) -> str:
    """The object prefix of one folder's content, below the staging bucket's own path (if any)."""
    return "/".join(p for p in (staging_path.strip("/"), PREFIX, digest) if p) + "/"


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


def _hash_and_sniff(path: Path, *, sniff: bool = True) -> tuple[str, str]:
    """The file's sha256 and, read in the same pass, what credential its start holds ("" for none)."""
    digest = hashlib.sha256()
    head = b""
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_BLOCK), b""):
            if sniff and len(head) <= SNIFF_BYTES:
                head += block[: SNIFF_BYTES + 1 - len(head)]
            digest.update(block)
    held = (credential_content(head) or "") if sniff and len(head) <= SNIFF_BYTES else ""
    return digest.hexdigest(), held


def build_manifest(folder: Path, *, hash_cache: Path | None = None, include: Sequence[str] | None = None) -> Manifest:
    """Every regular file under ``folder``, links followed only where they stay inside it. What would read outside the
    folder or cannot be an object (a link out, a device, FIFO, socket, a name with a line break) is refused in one line
    before a byte is hashed; credential files unless an ``include`` pattern names them; a home folder whole."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"data folder {folder} does not exist or is not a folder")
    check = include is not None
    if check and (markers := home_markers(folder)):
        raise UsageError(
            f"data folder {folder} is a home folder (it holds {', '.join(markers[:3])}): uploading it would take "
            "every file of yours, shell history and tools' logins included",
            hint="point the channel at the folder with the data",
        )
    wanted = _included(include or ())
    files, refused = _walk(folder, credentials=wanted if check else None)
    if any(_CREDENTIAL_HINT not in line for line in refused):  # nothing is read before these are fixed
        _refuse(folder, refused)
    known = _load(hash_cache)
    seen: dict[str, list[Any]] = {}
    entries = []
    for path, st in files:
        key = str(path.resolve())
        stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
        cached = known.get(key)
        if cached and cached[:3] == stamp and (not check or len(cached) > 4):
            sha, held = cached[3], cached[4] if len(cached) > 4 else ""
        else:
            sha, held = _hash_and_sniff(path, sniff=check and st.st_size <= SNIFF_BYTES)
        seen[key] = [*stamp, sha, held]
        rel = path.relative_to(folder).as_posix()
        if held and not wanted(rel, False):
            refused.append(_credential_line(folder, rel, held))
        entries.append(FileEntry(rel, st.st_size, sha))
    if refused:
        _save(hash_cache, seen)
        _refuse(folder, refused)
    if not entries:
        raise UsageError(f"data folder {folder} holds no files", hint="point the channel at the folder with the data")
    _save(hash_cache, seen)
    return Manifest(folder, tuple(sorted(entries, key=lambda f: f.path)))


def _refuse(folder: Path, refused: list[str]) -> None:
    shown = "; ".join(refused[:5]) + (f"; and {len(refused) - 5} more" if len(refused) > 5 else "")
    credentials = [line for line in refused if _CREDENTIAL_HINT in line]
    hint = (
        "credentials are never uploaded as data: move them out of the folder, or name each with --include "
        "PATTERN (gitignore syntax, relative to the data folder) to upload it all the same"
        if credentials and len(credentials) == len(refused)
        else "only files inside the folder are uploaded: copy them in or remove these"
    )
    raise UsageError(f"data folder {folder}: {shown}", hint=hint)


_CREDENTIAL_HINT = "not uploaded without --include"


def _credential_line(folder: Path, rel: str, why: str) -> str:
    return f"{_shown(folder / rel)} {why}: {_CREDENTIAL_HINT}"


def _included(include: Sequence[str]) -> Callable[[str, bool], bool]:
    """Whether ``--include`` names a path (relative to the data folder, gitignore syntax as for packages)."""
    if not include:
        return lambda rel, is_dir: False
    rules = parse_ignore_lines(include, source="--include")

    def named(rel: str, is_dir: bool) -> bool:  # a folder named (.aws) brings what it holds
        parts = rel.split("/")
        folders = ["/".join(parts[:i]) for i in range(1, len(parts))]
        return is_ignored(rules, rel, is_dir) is not None or any(is_ignored(rules, f, True) for f in folders)

    return named


def _walk(
    folder: Path, *, credentials: Callable[[str, bool], bool] | None = None
) -> tuple[list[tuple[Path, os.stat_result]], list[str]]:
    """(the regular files with their stat, what is refused) under ``folder``: links to folders inside are walked unless
    they loop; ``credentials``: refuse credential names not ``--include``d."""
    root = folder.resolve()
    files, refused = [], []
    chains = {str(folder): {root}}  # each folder walked → the real folders on its way from the root

    def named_credential(path: Path, name: str, is_dir: bool) -> str | None:
        category = credential_name(name) if credentials is not None else None
        rel = path.relative_to(folder).as_posix()
        if category is None or (credentials is not None and credentials(rel, is_dir)):
            return None
        what = "an environment file" if category == "environment file" else "a credential file"
        return _credential_line(folder, rel, f"is named like {what}")

    for dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
        chain = chains.pop(dirpath)
        dirnames.sort()
        for name in list(dirnames):
            path = Path(dirpath, name)
            problem = _entry_problem(path, name, root) or named_credential(path, name, True)
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
            problem = _entry_problem(path, name, root) or named_credential(path, name, False)
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


def _load(cache: Path | None) -> dict[str, list[Any]]:
    if cache is None or not cache.is_file():
        return {}
    try:
        data = json.loads(cache.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(cache: Path | None, seen: dict[str, list[Any]]) -> None:
    if cache is None:
        return
    try:
        write_atomic(cache, json.dumps(seen))
    except OSError:
        pass  # only a speed-up
