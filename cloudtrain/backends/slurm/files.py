"""A run folder on the cluster as a :class:`~cloudtrain.backends.files.Folder`: listed and read
over the login node's connection (:class:`~cloudtrain.backends.slurm.shell.ClusterShell`), one
small Python command each, so ``outputs`` and ``tensorboard`` need nothing on the cluster but
the Python its jobs already run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from cloudtrain import filetree as tree
from cloudtrain.backends.files import CHUNK, StoredFile
from cloudtrain.backends.slurm.shell import ClusterShell

#: The one reader (cloudtrain/filetree.py), run by the cluster's Python: ``list ROOT``, ``read ROOT REL START N``
_TREE = Path(tree.__file__).read_text()


class ClusterFolder:
    """``path`` on the cluster; on the login node's own filesystem when the cluster is this machine."""

    def __init__(self, shell: ClusterShell, path: str, python: str = "python3"):
        self.shell, self.path, self.python = shell, path.rstrip("/"), python
        self.list_calls = 0
        self.notes: list[str] = []

    @property
    def uri(self) -> str:
        return f"{self.shell.login}:{self.path}" if self.shell.remote else self.path

    @property
    def local_path(self) -> Path | None:
        return None if self.shell.remote else Path(self.path)

    def list(self) -> list[StoredFile]:
        self.list_calls += 1
        found = json.loads(self.shell.text([self.python, "-c", _TREE, "list", self.path]) or "{}")
        self.notes = [str(note) for note in found.get("notes", [])]
        return [StoredFile(rel, int(size), mode=int(mode)) for rel, size, mode in found.get("files", [])]

    def checksum_trusted(self, path: str) -> bool:
        return True  # none is listed

    def read(self, path: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        while end is None or start < end:
            want = CHUNK if end is None else min(CHUNK, end - start)
            block = self.shell.run([self.python, "-c", _TREE, "read", self.path, path, str(start), str(want)]).stdout
            if not block:
                return
            start += len(block)
            yield block
