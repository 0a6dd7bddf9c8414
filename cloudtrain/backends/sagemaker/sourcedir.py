"""The ``sourcedir.tar.gz`` the SageMaker TensorFlow container runs, built reproducibly.

For a package job: ``cloudtrain_launch.py`` (the ``sagemaker_program``) and ``dist/<name>-<version>-<hash>.tar.gz``,
the sdist unchanged. No ``setup.py`` or ``requirements.txt`` at the top, or the container would install the folder
itself. A script job's archive is the user's source folder file for file (:func:`cloudtrain.packaging.script.
source_members`), its script the program, and the container installs its requirements itself; with ``secrets:``
the launcher and ``cloudtrain_secrets.py`` are added and the launcher is the program. Entries are sorted, owned by
root, dated 1980-01-01, and the gzip header has no name and time 0: the same sdist gives the same bytes."""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from cloudtrain.packaging import BuiltPackage
from cloudtrain.packaging.script import source_members
from cloudtrain.secrets.job import LAUNCHER_SOURCE as SECRETS_SOURCE
from cloudtrain.secrets.job import MODULE_FILE as SECRETS_FILE

from .request import LAUNCHER

MTIME = 315532800  # 1980-01-01T00:00:00Z: valid in every archive format
LAUNCHER_SOURCE = Path(__file__).with_name("cloudtrain_launch.py")


@dataclass(frozen=True)
class Sourcedir:
    path: Path
    sha256: str
    size: int


def members(
    package: BuiltPackage, *, script: bool = False, secrets: bool = False
) -> list[tuple[str, Path | bytes, int]]:
    """(archive name, source file or bytes, mode), in archive order."""
    if script:
        files: list[tuple[str, Path | bytes, int]] = [
            (name, data, 0o755 if mode & 0o111 else 0o644) for name, data, mode in source_members(package.path)
        ]
        if secrets:
            ours = {LAUNCHER: (LAUNCHER_SOURCE, 0o755), SECRETS_FILE: (SECRETS_SOURCE, 0o644)}
            files = [f for f in files if f[0] not in ours] + [(n, src, mode) for n, (src, mode) in ours.items()]
        return sorted(files, key=lambda f: f[0])
    return sorted([(LAUNCHER, LAUNCHER_SOURCE, 0o755), (f"dist/{package.filename}", Path(package.path), 0o644)])


def write_sourcedir(package: BuiltPackage, dest: Path, *, script: bool = False, secrets: bool = False) -> Sourcedir:
    """Write the archive to ``dest`` and return its hash and size."""
    dest = Path(dest)
    with open(dest, "wb") as raw:
        _write(members(package, script=script, secrets=secrets), raw)
    digest = hashlib.sha256()
    with open(dest, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return Sourcedir(path=dest, sha256=digest.hexdigest(), size=dest.stat().st_size)


def _write(files: list[tuple[str, Path | bytes, int]], raw: BinaryIO) -> None:
    dirs = {"/".join(name.split("/")[:i]) for name, _, _ in files for i in range(1, name.count("/") + 1)}
    folders: list[tuple[str, Path | bytes | None, int]] = [(d, None, 0o755) for d in dirs]
    entries = sorted(folders + list(files), key=lambda e: e[0])
    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name, source, mode in entries:
                if source is None:
                    tar.addfile(_info(name, mode, tarfile.DIRTYPE))
                    continue
                info = _info(name, mode, tarfile.REGTYPE)
                if isinstance(source, bytes):
                    info.size = len(source)
                    tar.addfile(info, io.BytesIO(source))
                    continue
                info.size = source.stat().st_size
                with open(source, "rb") as f:
                    tar.addfile(info, f)


def _info(name: str, mode: int, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.mtime = MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info
