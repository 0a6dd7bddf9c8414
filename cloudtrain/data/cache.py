"""A bucket channel for a local run, downloaded once into a cache keyed by a hash of the object listing; files are
read-only, and a copy that no longer matches the listing is downloaded again."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from cloudtrain import leftovers
from cloudtrain.data import schemes
from cloudtrain.errors import UsageError
from cloudtrain.text.numbers import size

log = logging.getLogger("cloudtrain.data")


def listing(uri: str, store: Any) -> tuple[str, list[Any]]:
    """(prefix, objects): everything under ``uri`` as a folder; else the one object it names."""
    _, path = schemes.split_bucket(uri)
    folder = path.rstrip("/") + "/" if path.strip("/") else ""
    objects = [o for o in store.list(folder) if not o.name.endswith("/")]  # folder placeholders hold nothing
    if not objects and path and not path.endswith("/"):
        objects = [o for o in store.list(path) if o.name == path]
        folder = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
    if not objects:
        raise UsageError(f"data channel {uri} holds no objects", hint="check the path (it is read as a folder)")
    return folder, sorted(objects, key=lambda o: o.name)


def file_and_folder(names: list[str]) -> tuple[str, str] | None:
    """Two keys the first of which is the second's folder (``x``, ``x/y``): no folder holds both; else None."""
    present = set(names)
    for name in sorted(names):
        parts = name.split("/")
        for cut in range(1, len(parts)):
            parent = "/".join(parts[:cut])
            if parent in present:
                return parent, name
    return None


def cache_key(uri: str, objects: list[Any]) -> str:
    rows = [[o.name, o.size, o.version] for o in objects]
    return hashlib.sha256(json.dumps([uri, rows], separators=(",", ":")).encode()).hexdigest()


def fetch(uri: str, root: Path, *, store: Any) -> Path:
    """The local folder holding ``uri``'s objects, downloading them unless the cache has them."""
    folder, objects = listing(uri, store)
    clash = file_and_folder([o.name[len(folder) :] for o in objects])
    if clash:
        raise UsageError(
            f"{uri}: objects {folder + clash[0]!r} and {folder + clash[1]!r}: in a folder, {clash[0]} cannot be "
            "both a file and the folder that holds the other",
            hint="move one of them to another key (a cloud job copying the channel into a folder cannot hold both)",
        )
    dest = Path(root) / cache_key(uri, objects)
    total = sum(o.size for o in objects)
    if dest.is_dir():
        if _matches(dest, folder, objects):
            log.info("data %s: %d files, %s, from the cache %s", uri, len(objects), size(total), dest)
            return dest
        log.info("data %s: the cached copy %s was changed; downloading it again", uri, dest)
        remove(dest)
    log.info("data %s: downloading %d files, %s, into %s", uri, len(objects), size(total), dest)
    partial = dest.with_name(f".partial-{dest.name}-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    for old in Path(root).glob(".partial-*"):  # downloads of killed runs
        if leftovers.is_leftover(old, leftovers.PARTIAL_DIR):
            remove(old)
    try:
        for obj in objects:
            target = partial / obj.name[len(folder) :]
            if not target.resolve().is_relative_to(partial.resolve()):
                raise UsageError(f"{uri}: object {obj.name!r} would land outside the channel folder")
            target.parent.mkdir(parents=True, exist_ok=True)
            store.download(obj.name, target)
        _read_only(partial)
        try:
            partial.rename(dest)
            os.chmod(dest, stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
        except OSError:
            if not dest.is_dir():  # not a concurrent run that finished first
                raise
    finally:
        if partial.exists():
            remove(partial)
    return dest


def _matches(dest: Path, folder: str, objects: list[Any]) -> bool:
    """The cached copy still holds exactly the listed files at their sizes (root can write read-only files)."""
    expected = {o.name[len(folder) :]: o.size for o in objects}
    found = {p.relative_to(dest).as_posix(): p.stat().st_size for p in dest.rglob("*") if p.is_file()}
    return found == expected


def _read_only(folder: Path) -> None:
    for dirpath, _, files in os.walk(folder):
        for name in files:
            os.chmod(os.path.join(dirpath, name), stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    for dirpath, dirs, _ in os.walk(folder, topdown=False):
        for name in dirs:
            os.chmod(os.path.join(dirpath, name), stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)


def remove(folder: Path) -> None:
    """Delete a cached (read-only) copy."""
    for dirpath, _dirs, _ in os.walk(folder):
        os.chmod(dirpath, stat.S_IRWXU)
    shutil.rmtree(folder, ignore_errors=True)
