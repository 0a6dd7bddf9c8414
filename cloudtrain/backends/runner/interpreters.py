"""This machine's interpreters: which ``python3.X`` runs here (``PATH``, pyenv's versions folder, the
interpreter running cloudtrain), each asked in a process of its own. What :func:`.image.resolve_image`
is given to find the interpreter an environment is built on."""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

from cloudtrain.backends.runner.image import Interpreter

#: Where pyenv keeps its interpreters (uv's own ``uv python find`` does not look there).
PYENV_ROOT_DEFAULT = "~/.pyenv"


def find_python(version: str, setting: str | None = None) -> Interpreter | None:
    """A working ``python{version}``: the setting (a version), ``PATH``, pyenv, or this interpreter."""
    if setting and setting != version:
        return None  # local.python names one version: only that one
    candidates = [shutil.which(f"python{version}")]
    root = Path(os.path.expanduser(os.environ.get("PYENV_ROOT") or PYENV_ROOT_DEFAULT))
    candidates += sorted(glob.glob(str(root / "versions" / f"{version}.*" / "bin" / f"python{version}")), reverse=True)
    if f"{sys.version_info[0]}.{sys.version_info[1]}" == version:
        candidates.append(getattr(sys, "_base_executable", None) or sys.executable)
    for path in candidates:
        if path:
            found = probe(path)
            if found is not None and found.version == version:
                return found
    return None


@functools.cache
def probe(path: str) -> Interpreter | None:
    """The interpreter at ``path`` if it runs and has ``venv``; a pyenv shim resolves to its target."""
    code = (
        "import sys, venv; print('%d.%d' % sys.version_info[:2]); "  # any Python the user has: old syntax
        "print(getattr(sys, '_base_executable', sys.executable))"
    )
    try:
        out = subprocess.run([path, "-I", "-c", code], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split()
    if out.returncode != 0 or len(lines) != 2:
        return None
    return Interpreter(path=os.path.realpath(lines[1]), version=lines[0])
