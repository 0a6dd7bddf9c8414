"""Run a ``setup.py`` whose arguments are computed, to learn its name, version and requirements: a subprocess with
``setuptools.setup`` replaced by a recorder, stopped after :data:`TIMEOUT_S`; nothing is built or written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from cloudtrain.errors import PackagingError

TIMEOUT_S = 60.0

_RECORDER = r"""
import json, os, runpy, sys, traceback, types
path = sys.argv[1]
seen = {}
def record(*args, **kwargs):
    seen.update({k: kwargs.get(k) for k in ("name", "version", "install_requires")})
    seen["called"] = True
try:
    import setuptools
    setuptools.setup = record
except ImportError:
    setuptools = types.ModuleType("setuptools")
    setuptools.setup = record
    setuptools.find_packages = lambda *a, **k: []
    setuptools.find_namespace_packages = setuptools.find_packages
    sys.modules["setuptools"] = setuptools
try:
    import distutils.core
    distutils.core.setup = record
except ImportError:
    pass
sys.argv = [path, "--name"]
sys.path.insert(0, os.path.dirname(path))
try:
    runpy.run_path(path, run_name="__main__")
except BaseException as e:
    frames = [f for f in traceback.extract_tb(e.__traceback__) if os.path.abspath(f.filename) == path]
    line = frames[-1].lineno if frames else None
    print("\n" + json.dumps({"error": f"{type(e).__name__}: {e}".strip(), "line": line}))
    sys.exit(0)
if seen.get("install_requires") is not None:
    requires = seen["install_requires"]
    seen["install_requires"] = [str(r) for r in (requires.splitlines() if isinstance(requires, str) else requires)]
print("\n" + json.dumps({k: (None if v is None else v if isinstance(v, (bool, list)) else str(v))
                         for k, v in seen.items()}))
"""


def run_setup_py(path: Path, *, timeout_s: float = TIMEOUT_S, python: str = sys.executable) -> dict[str, Any]:
    """``{"name", "version", "install_requires"}`` as the ``setup.py`` at ``path`` passes them to ``setup()``."""
    path = Path(path).resolve()
    try:
        result = subprocess.run(
            [python, "-I", "-c", _RECORDER, str(path)],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise PackagingError(
            f"{path} ran longer than {timeout_s:g} s without calling setup()",
            "make it quick to run (no network, no builds), or put the metadata in pyproject.toml",
        ) from None
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    try:
        data = json.loads(lines[-1])
    except (IndexError, ValueError):
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise PackagingError(
            f"{path} could not be run: {last}", "run `python setup.py --name` there to see why"
        ) from None
    if "error" in data:
        where = f"{path}:{data['line']}" if data.get("line") else str(path)
        raise PackagingError(
            f"{where}: setup.py raised {data['error']}", "fix it so that `python setup.py --name` runs"
        )
    if not data.get("called"):
        raise PackagingError(
            f"{path} never calls setup()", "call setuptools.setup(name=…, version=…, install_requires=[…])"
        )
    return {k: data.get(k) for k in ("name", "version", "install_requires")}
