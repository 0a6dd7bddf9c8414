"""The isolated environment a local run executes in, cached by the package's hash.

One virtual environment per (package sdist, interpreter) under the cache dir. It is layered
on the interpreter running cloudtrain: ``--system-site-packages`` plus a ``.pth`` file that
adds this interpreter's own site-packages (a venv's ``--system-site-packages`` only reaches
the *base* Python, not the venv cloudtrain lives in). Heavy dependencies already present,
such as TensorFlow, are therefore reused, never reinstalled; the package and any
requirement that is missing or at the wrong version go into the new environment, which
comes first on ``sys.path``.

The sdist is installed with its requirements, offline first (``pip install --no-index``,
built with the setuptools already here): when the layered packages satisfy every
requirement, no network is needed. Only when one is missing does pip go to the index (one
retry); if that fails too, the error is one line naming the requirement.

Creation is atomic: the environment is built in a temporary folder beside its final place
and renamed into it, so an interrupted install never leaves a half-built cached env. (After
the rename ``bin/python`` works as usual; console scripts pip wrote keep the temporary path
in their first line, and ``python -m`` is what replicas run.)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from cloudtrain.errors import BackendError
from cloudtrain.history import cache_dir

Runner = Callable[..., subprocess.CompletedProcess]
MARKER = "cloudtrain-env.json"
LAYER_PTH = "_cloudtrain_layer.pth"
_PIP_QUIET = ["--disable-pip-version-check", "--no-input", "--no-warn-script-location", "--progress-bar", "off"]


@dataclass(frozen=True)
class PackageEnv:
    path: Path
    python: Path
    cached: bool  # True when an existing env was reused
    setup_seconds: float  # time spent here: a stat when cached, venv + pip install otherwise
    online: bool  # True when pip had to reach the package index


def cache_root() -> Path:
    """cloudtrain's one cache directory (see :func:`cloudtrain.history.cache_dir`)."""
    return cache_dir()


def env_key(package_sha256: str, base_prefix: str | None = None) -> str:
    """``<sha256[:16]>-py311-<8 hex of the interpreter's prefix>``: a new interpreter or venv gets a new env."""
    prefix = base_prefix if base_prefix is not None else sys.prefix
    tag = hashlib.sha256(prefix.encode()).hexdigest()[:8]
    return f"{package_sha256[:16]}-py{sys.version_info[0]}{sys.version_info[1]}-{tag}"


def env_dir(package_sha256: str, root: Path | None = None) -> Path:
    return (root or cache_root()) / "envs" / env_key(package_sha256)


def env_python(path: Path) -> Path:
    return path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def layer_paths() -> list[str]:
    """The site-packages of the interpreter running cloudtrain, to stack the env on."""
    paths = list(site.getsitepackages())
    purelib = sysconfig.get_paths()["purelib"]
    if purelib not in paths:
        paths.append(purelib)
    return [p for p in paths if os.path.isdir(p)]


def ensure_env(package, *, root: Path | None = None, run: Runner = subprocess.run) -> PackageEnv:
    """The cached env for ``package`` (a :class:`~cloudtrain.packaging.BuiltPackage`), built if missing."""
    start = time.monotonic()
    final = env_dir(package.sha256, root)
    if _is_complete(final, package.sha256):
        return PackageEnv(final, env_python(final), True, time.monotonic() - start, False)
    if final.exists():  # a foreign or damaged folder: never trust it
        shutil.rmtree(final, ignore_errors=True)
    final.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_builds(final.parent)
    tmp = final.parent / f".tmp-{final.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        online = _build(tmp, package, run)
        (tmp / MARKER).write_text(
            json.dumps(
                {
                    "package": str(package.path),
                    "sha256": package.sha256,
                    "name": package.name,
                    "version": package.version,
                    "python": sys.executable,
                    "layers": layer_paths(),
                    "online": online,
                    "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "install_seconds": round(time.monotonic() - start, 3),
                },
                indent=2,
            )
        )
        try:
            os.rename(tmp, final)
        except OSError:
            if not _is_complete(final, package.sha256):  # not a concurrent build that won the race
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return PackageEnv(final, env_python(final), False, time.monotonic() - start, online)


def _is_complete(path: Path, sha256: str) -> bool:
    try:
        return json.loads((path / MARKER).read_text())["sha256"] == sha256 and env_python(path).exists()
    except (OSError, ValueError, KeyError):
        return False


def _remove_stale_builds(envs: Path) -> None:
    """Temporary builds whose process is gone (interrupted installs)."""
    for tmp in envs.glob(".tmp-*"):
        pid = tmp.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _build(tmp: Path, package, run: Runner) -> bool:
    """venv + layer + pip install; returns whether the package index was needed."""
    have_pip = _importable("pip")
    cmd = [sys.executable, "-m", "venv", "--system-site-packages", *(["--without-pip"] if have_pip else []), str(tmp)]
    _check(run(cmd, capture_output=True, text=True), "cannot create a virtual environment", cmd)
    purelib = _env_purelib(tmp, run)
    lines = [f"import site; site.addsitedir({p!r})" for p in layer_paths()]
    (Path(purelib) / LAYER_PTH).write_text("\n".join(lines) + "\n")

    python = str(env_python(tmp))
    # Build with the setuptools already here (no build env to download), as the SageMaker launcher does.
    isolation = ["--no-build-isolation"] if _importable("setuptools") else []
    install = [python, "-m", "pip", "install", *_PIP_QUIET, *isolation, str(package.path)]
    offline = run([*install[:4], "--no-index", *install[4:]], capture_output=True, text=True)
    if offline.returncode == 0:
        return False
    missing = _missing_requirement(offline.stderr + offline.stdout)
    if missing is None:
        _check(offline, f"cannot install {Path(package.path).name}", install)
    online = run([*install[:4], "--retries", "1", "--timeout", "15", *install[4:]], capture_output=True, text=True)
    if online.returncode != 0:
        raise BackendError(
            f"requirement {missing!r} of {package.name} is not installed here and pip could not get it: "
            f"{_last_line(online)}",
            f"install it next to cloudtrain (pip install '{missing}') or connect to the internet, then run again",
        )
    return True


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _env_purelib(env: Path, run: Runner) -> str:
    cmd = [str(env_python(env)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    result = run(cmd, capture_output=True, text=True)
    _check(result, "the new virtual environment does not start", cmd)
    return result.stdout.strip()


_MISSING = (
    re.compile(r"No matching distribution found for ([^\s]+)"),
    re.compile(r"Could not find a version that satisfies the requirement ([^\s]+)"),
)


def _missing_requirement(output: str) -> str | None:
    for pattern in _MISSING:
        match = pattern.search(output)
        if match:
            return match.group(1)
    return None


def _last_line(result: subprocess.CompletedProcess) -> str:
    output = ((result.stderr or "") + (result.stdout or "")).strip().splitlines()
    return next((line.strip() for line in reversed(output) if line.strip()), "no output")


def _check(result: subprocess.CompletedProcess, what: str, cmd: Sequence[str]) -> None:
    if result.returncode != 0:
        raise BackendError(f"{what}: {_last_line(result)}", f"command: {' '.join(map(str, cmd))}")
