"""Helpers shared by the packaging tests."""

from __future__ import annotations

import tarfile
from pathlib import Path


def write(root: Path, relpath: str, text: str = "x\n") -> Path:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def member_bytes(tar: tarfile.TarFile, member: str | tarfile.TarInfo) -> bytes:
    """The bytes of a regular file in the archive (``extractfile`` gives None for anything else)."""
    f = tar.extractfile(member)
    assert f is not None, f"{member} is not a regular file in the archive"
    return f.read()


def packaged(built) -> set[str]:
    """Paths inside the package folder, e.g. {"mini_trainer/task.py", ...}."""
    top = f"{built.name}-{built.version}/"
    with tarfile.open(built.path) as tar:
        names = {m.name for m in tar.getmembers() if m.isfile()}
    assert names == set(built.files)
    return {n[len(top) :] for n in names if n.startswith(top) and n.count("/") > 1}
