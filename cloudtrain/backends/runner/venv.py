"""The isolated environments a local run executes in: an image, a requirements and a package layer.

Nothing from cloudtrain's own environment is visible in them. Each layer is a virtual environment cached by
content under ``<cache>/envs/`` (``$CLOUDTRAIN_CACHE_DIR``, default ``~/.cache/cloudtrain``), keyed by what decides
what it holds, so an edit rebuilds only the layer it changes:

``image-<key>/``
    The stand-in for the cloud's prebuilt image (:class:`~.image.Image`): the interpreter, pip, the image's
    TensorFlow and what the image ships. Built with uv where found (``$UV`` or ``PATH``), from uv's cache
    ``--offline`` first so a rebuild needs no network; otherwise ``python -m venv`` and pip.
``deps-<key>/``
    The package's requirements, installed with **pip, as the cloud installs them**, ``--no-index`` first, in a
    venv whose ``_cloudtrain_image.pth`` puts the image layer after its own site-packages. ``key`` is
    :func:`requirements_key`, **never the package's code**. An uninstallable requirement is one line naming it
    (exit 2); one that needs an unreachable index, one line (exit 3), before anything runs.
``pkg-<key>/``
    The package itself, installed in-process as ``pip install --no-deps`` of its sdist would
    (:mod:`cloudtrain.packaging.install`), in well under a second: a code-only edit rebuilds only this.

Each folder holds ``cloudtrain-env.json`` (kind, key, created, last_used, the ``image`` under it). Builds happen in
``.tmp-<name>-<pid>`` and are renamed into place, so an interrupted build never leaves a half-built env.
``cloudtrain cache prune`` keeps what a kept layer stands on."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cloudtrain import leftovers
from cloudtrain.backends.runner import build_steps
from cloudtrain.backends.runner.env_keys import (
    deps_dir,
    env_dir,
    env_python,
    image_dir,
    index_settings,
    requirements_key,
    requirements_of,
    spaceless,
)
from cloudtrain.backends.runner.image import PIP_AS_OF, Image
from cloudtrain.errors import BackendError, CloudUnreachable, PackagingError
from cloudtrain.leftovers import pid_alive
from cloudtrain.packaging import BuiltPackage
from cloudtrain.packaging.install import install_sdist
from cloudtrain.packaging.metadata import requirement_name
from cloudtrain.text.numbers import size

Runner = Callable[..., subprocess.CompletedProcess[Any]]
MARKER = "cloudtrain-env.json"
IMAGE_PTH = "_cloudtrain_image.pth"
_PIP_QUIET = ["--disable-pip-version-check", "--no-input", "--no-warn-script-location", "--progress-bar", "off"]


@dataclass(frozen=True)
class PackageEnv:
    path: Path
    python: Path
    cached: bool  # True when an existing env was reused
    setup_seconds: float  # time spent here: a stat when cached, venv + installs otherwise
    online: bool  # True when an install had to reach the package index
    image: Path | None = None  # the image layer under it
    description: str = ""  # "Python 3.10 + TensorFlow 2.17 + tensorboard"
    code_only: bool = False  # built now, on a reused requirements layer: only the package's code was installed


def find_uv() -> str | None:
    """uv, if this machine has it: ``$UV`` (``uv run`` sets it), else ``uv`` on PATH."""
    candidate = os.environ.get("UV") or shutil.which("uv")
    return candidate if candidate and os.access(candidate, os.X_OK) else None


# --- the image layer -----------------------------------------------------------------------


def ensure_image(
    image: Image,
    *,
    root: Path | None = None,
    run: Runner = subprocess.run,
    uv: str | None = "auto",
    log: Callable[[str], None] | None = None,
) -> tuple[Path, bool]:
    """The image layer's folder, built if missing; and whether it was built now."""
    final = image_dir(image, root)
    if _is_complete(final, image.key):
        _touch(final)
        return final, False
    uv = find_uv() if uv == "auto" else uv
    if log:
        what = ", ".join(image.packages)
        log(f"building the local image environment once ({image.describe()}): {what}; later runs reuse it")

    def build(tmp: Path) -> dict[str, Any]:
        # uv: a bare venv, pip installed from uv's cache like the rest; else the interpreter's venv + ensurepip
        cmd = (
            [uv, "venv", "--quiet", "--python", image.python.path, str(tmp)]
            if uv
            else [image.python.path, "-m", "venv", str(tmp)]
        )
        with build_steps.phase(
            f"image environment: creating a Python {image.python.version} virtual environment", log, folder=tmp
        ):
            _check(
                run(cmd, capture_output=True, text=True),
                f"cannot create a virtual environment with {image.python.path}",
                cmd,
            )
        online = _install_image_packages(tmp, image, run, uv, log)
        return {
            "kind": "image",
            "python": image.python.path,
            "python_version": image.python.version,
            "tensorflow": image.tensorflow,
            "packages": list(image.packages),
            "as_of": image.date,
            "online": online,
            "installer": "uv" if uv else "pip",
        }

    _build_atomically(final, image.key, build)
    return final, True


def _install_image_packages(
    tmp: Path, image: Image, run: Runner, uv: str | None, log: Callable[[str], None] | None = None
) -> bool:
    """Install the image's packages into ``tmp``; returns whether the index was used. Each phase (from
    uv's cache; download; install) is one ``log`` line with its size and time, and live on a terminal."""
    python = str(env_python(tmp))
    what = "image environment"
    as_of = image.as_of(pip=not uv)
    if uv:
        pip = [] if any(re.split(r"[<>=!~;\[ ]", p)[0] == "pip" for p in image.packages) else ["pip"]
        for packages in (image.packages, image.nearest):
            base = [uv, "pip", "install", "--python", python, *as_of, *pip, *packages]  # not --quiet: its step lines
            with build_steps.phase(f"{what}: installing from uv's cache", None, folder=tmp):
                offline = run([*base[:3], "--offline", *base[3:]], capture_output=True, text=True)
            if offline.returncode == 0:
                _log_uv_steps(log, what, offline.stderr or "", tmp, cached=True)
                return False
            with build_steps.phase(f"{what}: downloading and installing {', '.join(packages)}", None, folder=tmp):
                result = run(base, capture_output=True, text=True)
            if result.returncode == 0:
                _log_uv_steps(log, what, result.stderr or "", tmp, cached=False)
                break
            if image.nearest and log and packages is image.packages:  # the image's pins: none for this Python
                log(
                    f"{what}: the image's pins do not install with Python {image.python.version} "
                    f"({_last_line(result)}); installing the nearest versions as of {image.date}"
                )
            if not image.nearest:
                break
    elif image.packages:
        with build_steps.phase(
            f"{what}: downloading and installing {', '.join(image.packages)}", log, folder=tmp
        ) as details:
            pip = [python, "-m", "pip", "install", *_PIP_QUIET]
            if as_of and run([*pip, "--upgrade", PIP_AS_OF], capture_output=True, text=True).returncode != 0:
                as_of = ()  # no pip that knows the cutoff: the install below fails or succeeds as it would
            result = run([*pip, *as_of, *image.packages], capture_output=True, text=True)
            if result.returncode != 0 and image.nearest:
                result = run([*pip, *as_of, *image.nearest], capture_output=True, text=True)
            downloaded = build_steps.pip_downloaded_bytes(result.stdout or "")
            details.append(f"{size(downloaded)} downloaded" if downloaded else "nothing downloaded")
    else:
        return False
    if result.returncode != 0:
        raise BackendError(
            f"cannot install the image's packages ({', '.join(image.packages)}) for Python {image.python.version}: "
            f"{_last_line(result)}",
            "connect to the package index once (later runs are offline), or set local.python / image.tensorflow",
        )
    return True


def _log_uv_steps(log: Callable[[str], None] | None, what: str, output: str, folder: Path, *, cached: bool) -> None:
    """uv's download and install steps as one line each: packages, size, time."""
    if log is None:
        return
    steps = build_steps.uv_steps(output)
    seconds = build_steps.seconds_text
    if "prepared" in steps and not cached:  # offline, "prepared" is unpacking from uv's cache
        count, took = steps["prepared"]
        log(f"{what}: downloaded {count} package{'s' if count != 1 else ''} in {seconds(took)}")
    count, took = steps.get("installed", (0, 0.0))
    source = " from uv's cache" if cached else ""
    log(
        f"{what}: installed {count} package{'s' if count != 1 else ''}{source}, "
        f"{size(build_steps.folder_bytes(folder))}, in {seconds(took)}"
    )


# --- the package layer ---------------------------------------------------------------------


def ensure_env(
    package: BuiltPackage,
    image: Image,
    *,
    root: Path | None = None,
    run: Runner = subprocess.run,
    uv: str | None = "auto",
    log: Callable[[str], None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> PackageEnv:
    """The env of ``package`` on ``image``, in three layers: the image (:func:`ensure_image`), the requirements
    (``deps-<key>``, :func:`requirements_key`, which a code edit reuses) and the package's own ``pkg-<key>``, which
    holds only the package, so a code-only edit installs just it, offline, in well under a second."""
    start = time.monotonic()
    final = env_dir(package, image, root, environ)
    label = f"{package.name} {package.version}"
    if _is_complete(final, package.sha256) and image_layer_present(final):
        _touch(final)
        return PackageEnv(
            final, env_python(final), True, time.monotonic() - start, False, image_dir(image, root), image.describe()
        )
    deps = ensure_requirements(
        requirements_of(package), image, label=label, root=root, run=run, uv=uv, log=log, environ=environ
    )

    def build(tmp: Path) -> dict[str, Any]:
        site = _layered_venv(tmp, deps.path, image, run)
        with build_steps.phase(f"package environment: installing {label} (its code only)", log, folder=tmp):
            install_sdist(package.path, Path(site))  # pip's install of it, file for file, in milliseconds
        return {"kind": "package", "image": deps.path.name, "installs": [str(package.path)], "label": label}

    _build_atomically(final, package.sha256, build)
    took = time.monotonic() - start  # on the requirements layer: its image layer and description are this env's
    return PackageEnv(final, env_python(final), False, took, deps.online, deps.image, deps.description, deps.cached)


def ensure_requirements(
    requirements: Sequence[str],
    image: Image,
    *,
    label: str,
    root: Path | None = None,
    run: Runner = subprocess.run,
    uv: str | None = "auto",
    log: Callable[[str], None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> PackageEnv:
    """The requirements layer: a venv on ``image`` with ``requirements`` installed, cached under
    :func:`requirements_key`. What the image layer already has is not installed again (``--no-index``
    first); only a requirement it lacks goes to the index."""
    start = time.monotonic()
    index = index_settings(environ)
    key = requirements_key(requirements, image, index)
    final = deps_dir(key, root)
    if _is_complete(final, key) and image_layer_present(final):
        _touch(final)
        return PackageEnv(
            final, env_python(final), True, time.monotonic() - start, False, image_dir(image, root), image.describe()
        )
    base, _ = ensure_image(image, root=root, run=run, uv=uv, log=log)

    def build(tmp: Path) -> dict[str, Any]:
        _layered_venv(tmp, base, image, run)
        online = False
        if requirements:
            with build_steps.phase(f"package environment: installing the requirements of {label}", log, folder=tmp):
                online = _pip_install(tmp, label, requirements, image, run)
        return {
            "kind": "requirements",
            "image": base.name,
            "requirements": sorted(requirements),
            "index": dict(index),
            "python": image.python.path,
            "online": online,
        }

    try:
        marker = _build_atomically(final, key, build)
    except _IndexUnreachable as cut:
        raise _unreachable_error(cut, requirements, _built_before(final.parent, base.name), label) from None
    return PackageEnv(
        final, env_python(final), False, time.monotonic() - start, bool(marker.get("online")), base, image.describe()
    )


def _built_before(envs: Path, image_name: str) -> set[str]:
    """The requirements of the requirements layers already built on the image layer ``image_name``."""
    known: set[str] = set()
    for marker in envs.glob(f"deps-*/{MARKER}"):
        try:
            data = json.loads(marker.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("image") == image_name:
            known.update(spaceless(str(r)) for r in data.get("requirements") or [])
    return known


def _layered_venv(tmp: Path, under: Path, image: Image, run: Runner) -> str:
    """A venv without pip at ``tmp`` whose ``.pth`` puts the env ``under`` it (and what that one puts
    under itself) after its own site-packages: what is installed here wins. Returns its site-packages."""
    cmd = [image.python.path, "-m", "venv", "--without-pip", str(tmp)]
    _check(run(cmd, capture_output=True, text=True), "cannot create a virtual environment", cmd)
    # the real path: an env root reached through a link (a cluster workdir linked to a cache) may vanish
    lines = [f"import site; site.addsitedir({os.path.realpath(p)!r})" for p in _site_dirs(under, run)]
    site = _site_dirs(tmp, run)[0]
    (Path(site) / IMAGE_PTH).write_text("\n".join(lines) + "\n")
    return site


def _pip_install(env: Path, label: str, requirements: Sequence[str], image: Image, run: Runner) -> bool:
    """pip install into ``env``: offline first, then from the index; returns whether the index was used."""
    install = [str(env_python(env)), "-m", "pip", "install", *_PIP_QUIET, "--no-build-isolation", *requirements]
    offline = run([*install[:4], "--no-index", *install[4:]], capture_output=True, text=True)
    if offline.returncode == 0:
        return False
    output = offline.stderr + offline.stdout
    needed = _missing_requirement(output)
    if needed is None:
        raise _install_error(offline, label, requirements, image)
    online = run([*install[:4], "--retries", "1", "--timeout", "15", *install[4:]], capture_output=True, text=True)
    if online.returncode != 0:
        unreachable = _unreachable(online)
        if unreachable:
            raise _IndexUnreachable(needed, unreachable)
        raise _install_error(online, label, requirements, image)
    return True


class _IndexUnreachable(Exception):
    """pip needed the index for ``needed`` (the first requirement it lacked offline) and could not reach it."""

    def __init__(self, needed: str, why: str):
        super().__init__(needed, why)
        self.needed, self.why = needed, why


#: pip's words for an index it could not reach (a cut network, a proxy, a wrong host), most telling first.
_UNREACHABLE = (
    "Connection refused",
    "Network is unreachable",
    "No route to host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "ProxyError",
    "ConnectTimeoutError",
    "Read timed out",
    "Failed to establish a new connection",
)


def _unreachable(result: subprocess.CompletedProcess[str]) -> str | None:
    """Why the index could not be reached, in pip's words, when that is why the install failed."""
    output = (result.stderr or "") + (result.stdout or "")
    return next((words for words in _UNREACHABLE if words in output), None)


def _unreachable_error(
    cut: _IndexUnreachable, requirements: Sequence[str], before: set[str], label: str
) -> CloudUnreachable:
    """One line: the requirements changed, these need the index, and the index cannot be reached. Named are
    the requirements no earlier environment on this image had (the change), else the one pip lacked."""
    changed = [r for r in requirements if spaceless(r) not in before]
    if not changed:
        name = _name_of(cut.needed)
        changed = [next((r for r in requirements if _name_of(r) == name), cut.needed)]
    which = ", ".join(repr(r) for r in changed)
    return CloudUnreachable(
        f"requirement{'s' if len(changed) > 1 else ''} {which} of {label} "
        f"{'are' if len(changed) > 1 else 'is'} not in the local environments and the package index cannot be "
        f"reached ({cut.why}): "
        + (
            "the package's requirements changed since its environment was built"
            if before
            else "no environment of it was built on this image yet"
        ),
        "connect to the network for this one run (later runs with these requirements need none), "
        "or put the requirements back as they were",
    )


def _name_of(requirement: str) -> str:
    """The distribution a requirement (or pip's quoted ``'name>=1',``) names; the text itself if none."""
    try:
        return requirement_name(requirement.strip("'\"").rstrip(","))
    except (AssertionError, PackagingError):
        return requirement


_MISSING = (
    re.compile(r"No matching distribution found for ([^\s]+)"),
    re.compile(r"Could not find a version that satisfies the requirement ([^\s]+)"),
)
_FAILED_BUILD = (
    re.compile(r"Failed to build ([^\s]+)"),
    re.compile(r"Failed building wheel for ([^\s]+)"),
    re.compile(r"Collecting ([^\s]+)"),  # the last one collected is the one that broke
)


_RAISED = re.compile(r"\s*([A-Za-z_][\w.]*(?:Error|Exception)): (.*)$")


def _missing_requirement(output: str) -> str | None:
    return next((match.group(1) for pattern in _MISSING if (match := pattern.search(output))), None)


def _install_error(
    result: subprocess.CompletedProcess[str], label: str, requirements: Sequence[str], image: Image
) -> PackagingError:
    """One line naming the requirement that could not be installed."""
    output = (result.stderr or "") + (result.stdout or "")
    culprit = _missing_requirement(output)
    why = "no version of it on the package index fits" if culprit else "pip failed to build it"
    if culprit is None:
        culprit = next((found[-1] for pattern in _FAILED_BUILD if (found := pattern.findall(output))), None)
    if culprit:
        name = _name_of(culprit)
        shown = next((r for r in requirements if requirement_name(r) == name), culprit)
        return PackagingError(
            f"requirement {shown!r} of {label} cannot be installed with Python {image.python.version} ({why}: "
            f"{_last_line(result)}); the cloud's pip would fail the same way, before training",
            "change or drop that pin in the package's setup.py / requirements",
        )
    return PackagingError(
        f"cannot install {label}: {_last_line(result)}", "run it again with --debug to see pip's output"
    )


# --- shared --------------------------------------------------------------------------------


_ADDSITEDIR = re.compile(r"site\.addsitedir\((['\"])(?P<path>.+?)\1\)")


def image_layer_present(env: Path) -> bool:
    """Whether every image-layer folder the package env's ``.pth`` adds still exists: an env whose layer
    was removed would start without TensorFlow, so it is rebuilt rather than reused."""
    for pth in env.glob(f"lib/python*/site-packages/{IMAGE_PTH}"):
        for match in _ADDSITEDIR.finditer(pth.read_text(errors="replace")):
            if not os.path.isdir(match["path"]):
                return False
    return True


def _build_atomically(final: Path, key: str, build: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """Build in a temporary folder beside ``final`` and rename it into place; returns the marker."""
    if final.exists():  # a foreign or damaged folder: never trust it
        shutil.rmtree(final, ignore_errors=True)
    final.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_builds(final.parent)
    tmp = final.parent / f".tmp-{final.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    start = time.monotonic()
    try:
        with leftovers.temporary_dir("build") as scratch, _temp_dir_for_children(scratch):
            marker = build(tmp)
        now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        marker.update(key=key, created=now, last_used=now, build_seconds=round(time.monotonic() - start, 3))
        (tmp / MARKER).write_text(json.dumps(marker, indent=2))
        try:
            os.rename(tmp, final)
        except OSError:
            if not _is_complete(final, key):  # not a concurrent build that won the race
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return marker


@contextlib.contextmanager
def _temp_dir_for_children(folder: Path) -> Iterator[None]:
    """pip and uv put their temp folders (hundreds of MB while unpacking TensorFlow) in ``folder``:
    cloudtrain's own temp folder, removed on the way out (an error, Ctrl-C, SIGTERM) and swept by
    the next run when a kill left it (:mod:`cloudtrain.leftovers`)."""
    names = ("TMPDIR", "TEMP", "TMP")
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update({name: str(folder) for name in names})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _is_complete(path: Path, key: str) -> bool:
    try:
        return json.loads((path / MARKER).read_text())["key"] == key and env_python(path).exists()
    except (OSError, ValueError, KeyError):
        return False


def _touch(path: Path) -> None:
    """Record the use in the marker (what a prune keeps by)."""
    marker = path / MARKER
    try:
        data = json.loads(marker.read_text())
        data["last_used"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        tmp = marker.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=2))
        os.replace(tmp, marker)
    except (OSError, ValueError):
        pass


def _remove_stale_builds(envs: Path) -> None:
    """Temporary builds whose process is gone (interrupted installs)."""
    for tmp in envs.glob(".tmp-*"):
        pid = tmp.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)


def _site_dirs(env: Path, run: Runner) -> list[str]:
    """purelib (and platlib, when different) of the env at ``env``."""
    code = "import sysconfig; p = sysconfig.get_paths(); print(p['purelib']); print(p['platlib'])"
    cmd = [str(env_python(env)), "-I", "-c", code]
    result = run(cmd, capture_output=True, text=True)
    _check(result, "the new virtual environment does not start", cmd)
    return list(dict.fromkeys(result.stdout.splitlines()))  # a path may hold a blank


def _last_line(result: subprocess.CompletedProcess[str]) -> str:
    """The most telling line of a failed command: its last specific ``error:`` line, else its last line."""
    output = ((result.stderr or "") + "\n" + (result.stdout or "")).strip().splitlines()
    generic = (
        "metadata-generation-failed",
        "subprocess-exited-with-error",
        "Failed to build installable wheels",
        "failed-wheel-build-for-install",
        "Could not build wheels",
        "legacy-install-failure",
        "Failed building wheel",
        "Failed to build",
    )
    errors = [
        line.strip().split(":", 1)[1].strip()
        for line in output
        if re.match(r"\s*(ERROR|error):", line) and not any(g in line for g in generic)
    ]
    if errors:
        return errors[-1]
    raised = [m for line in output if (m := _RAISED.match(line))]
    if raised:  # a build that raised: its exception, without the temporary build folder's path
        name, text = raised[-1].groups()
        return f"{name}: {re.sub(r'/tmp/pip-[^/ ]*/[^/ ]*/', '', text)}"[:200]
    noise = ("note:", "hint:", "[notice]", "╰─>", "×", "See above")
    lines = [line.strip() for line in output if line.strip() and not line.strip().startswith(noise)]
    return lines[-1] if lines else "no output"


def _check(result: subprocess.CompletedProcess[str], what: str, cmd: Sequence[str]) -> None:
    if result.returncode != 0:
        raise BackendError(f"{what}: {_last_line(result)}", f"command: {' '.join(map(str, cmd))}" if cmd else None)
