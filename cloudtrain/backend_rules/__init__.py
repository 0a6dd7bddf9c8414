"""The one list of backends, and what the config needs of each: the ground floor below ``config/``. Registering is
one line, ``register(name, "its.module")``; plugins register through entry points, and one that cannot load is one line
(:class:`PluginError`) while the others go on working (docs/how-to/add-a-backend.md)."""

from __future__ import annotations

import contextlib
import functools
import importlib
import logging
import os
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, cast

from cloudtrain.backend_rules.capabilities import Capabilities as Capabilities
from cloudtrain.backend_rules.capabilities import Capability as Capability
from cloudtrain.backend_rules.capabilities import Refusal as Refusal
from cloudtrain.errors import MissingExtra, UsageError

if TYPE_CHECKING:  # the rules' module reads the catalog's records: `cloudtrain --help` needs neither
    from cloudtrain.backend_rules.interface import BackendRules

_REGISTRY: dict[str, str] = {}  # name -> module exposing BACKEND, in registration order
_SECTIONS: dict[str, str] = {}  # name -> "module:Record" of its `<name>:` config section
_SDK: dict[str, str] = {}  # top-level module of a cloud's libraries -> the backend whose extra installs it
_TITLES: dict[str, str] = {}  # name -> its title in messages, known without importing the backend
_LISTED: dict[str, str] = {}  # name -> "module:function": a job's own record, read without the backend
_COMMANDS: dict[str, tuple[str, str]] = {}  # CLI command -> ("module:attr" of its click command, its help line)
_BY_NAME: set[str] = set()  # names whose ``attach`` takes the full name history records, not the short id
_STATES_AT_ONCE: dict[str, str] = {}  # name -> "module:function": many jobs' states in one call, without the backend
_PLUGINS: dict[str, str] = {}  # name -> "entry point 'name = value' (group) of distribution 'dist'", plugins only
_PLUGIN_SECTIONS: dict[str, str] = {}  # name -> the same words for its cloudtrain.backend_sections entry point
_plugins_read = False
#: The entry-point groups a backend outside this repository registers through.
PLUGIN_GROUP = "cloudtrain.backends"
SECTION_GROUP = "cloudtrain.backend_sections"
log = logging.getLogger("cloudtrain.plugins")
#: The backend that runs a job on this machine: what ``--local`` picks.
LOCAL = "local"
#: The contract and image rules a job run outside the clouds follows when its config names no ``target``.
DEFAULT_CONTRACT = "vertex"


def register(
    name: str,
    module: str,
    *,
    section: str | None = None,
    sdk: tuple[str, ...] = (),
    title: str | None = None,
    listed: str | None = None,
    attach_by_name: bool = False,
    commands: dict[str, tuple[str, str]] | None = None,
    states_at_once: str | None = None,
) -> None:
    """Make ``name`` a backend whose ``module`` exposes ``BACKEND``. ``section``: ``"module:Record"`` of its keys;
    ``sdk``: its extra's modules (:func:`missing_extra`); ``title``: for ``--help``; the others are read without
    importing it (:func:`listed_reader`, :func:`attaches_by_name`, :func:`commands`, :func:`states_reader`)."""
    _REGISTRY[name] = module
    if attach_by_name:
        _BY_NAME.add(name)
    if states_at_once is not None:
        _STATES_AT_ONCE[name] = states_at_once
    if title is not None:
        _TITLES[name] = title
    if section is not None:
        _SECTIONS[name] = section
    if listed is not None:
        _LISTED[name] = listed
    for top in sdk:
        _SDK.setdefault(top, name)
    _COMMANDS.update(commands or {})


_GCLOUD_OLD = "gcloud ml-engine / ai-platform: `jobs submit training JOB …` and `local train` as typed for gcloud."
# google.cloud, .api_core, .auth, .protobuf
register(
    "vertex",
    "cloudtrain.backends.vertex",
    sdk=("google", "grpc"),
    title="Vertex AI",
    commands={
        "ai": (
            "cloudtrain.backends.vertex.commands:ai",
            "gcloud ai: `custom-jobs create` and `custom-jobs local-run` as typed for gcloud.",
        ),
        "ai-platform": ("cloudtrain.backends.vertex.commands:mlengine", _GCLOUD_OLD),
        "ml-engine": ("cloudtrain.backends.vertex.commands:mlengine", _GCLOUD_OLD),
    },
)
# sagemaker.core
register(
    "sagemaker",
    "cloudtrain.backends.sagemaker",
    sdk=("boto3", "botocore", "sagemaker"),
    title="SageMaker",
    commands={
        "init": (
            "cloudtrain.backends.sagemaker.commands:init",
            "Write a script-mode config from an estimator's literal arguments; list what to fill in.",
        )
    },
)
register(
    "local",
    "cloudtrain.backends.local.backend",
    section="cloudtrain.backends.local.section:Local",
    title="this machine",
    listed="cloudtrain.backends.local.find:listed",
    attach_by_name=True,
)
register(
    "slurm",
    "cloudtrain.backends.slurm.backend",
    section="cloudtrain.backends.slurm.section:Slurm",
    title="Slurm",
    states_at_once="cloudtrain.backends.slurm.squeue:states_now",  # one squeue a cluster
)
register(
    "kubernetes",
    "cloudtrain.backends.kubernetes.backend",
    section="cloudtrain.backends.kubernetes.section:Kubernetes",
    sdk=("kubernetes",),
    title="Kubernetes",
)


class PluginError(UsageError):
    """A backend registered by another distribution cannot be loaded: one line, naming it."""


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning("warning: %s", message)


def _origin(point: Any) -> str:
    dist = getattr(point, "dist", None)
    where = f"distribution {dist.name!r}" if dist is not None else "an unnamed distribution"
    return f"entry point '{point.name} = {point.value}' ({point.group}) of {where}"


def _declaring(group: str) -> list[str]:
    """The dist-info folders whose ``entry_points.txt`` names ``group`` (2 ms, where importlib.metadata takes 40)."""
    marker = f"[{group}]".encode()
    found = []
    for folder in sys.path:
        try:
            entries = os.scandir(folder or ".")
        except OSError:  # a zip file, a folder that is gone
            continue
        with entries:
            for entry in entries:
                if entry.name.endswith((".dist-info", ".egg-info")):
                    path = os.path.join(entry.path, "entry_points.txt")
                    try:  # never a FIFO's read that blocks, a device's that never ends
                        text = _regular(path)
                    except FileNotFoundError:
                        continue
                    except OSError as exc:
                        _warn_once(f"{path}: {exc.strerror or exc}; its entry points are ignored")
                        continue
                    if marker not in text:
                        continue
                    try:
                        text.decode()
                    except UnicodeDecodeError:
                        _warn_once(f"{path} is not UTF-8; its entry points are ignored")
                        continue
                    found.append(entry.path)
    return found


def _regular(path: str) -> bytes:
    """The first MiB of ``path``, opened without blocking; OSError for what is not a regular file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise OSError(0, f"is {kind}")
        return f.read(1 << 20)


def _read_plugins() -> None:
    """Register the backends other distributions declare (once; no plugin module is imported)."""
    global _plugins_read
    if _plugins_read:
        return
    _plugins_read = True
    folders = _declaring(PLUGIN_GROUP)
    if not folders:
        return
    from importlib.metadata import Distribution

    points = [p for folder in folders for p in Distribution.at(folder).entry_points]
    sections = {p.name: p for p in points if p.group == SECTION_GROUP}
    for point in (p for p in points if p.group == PLUGIN_GROUP):
        origin = _origin(point)
        if point.name in _REGISTRY:
            if _PLUGINS.get(point.name) != origin:  # the same distribution seen twice on sys.path is one
                _warn_once(f"{origin} is ignored: backend {point.name!r} is registered already")
            continue
        if not point.name.isidentifier() or not point.module or point.attr:
            _warn_once(f"{origin} is ignored: it must read 'name = package.module' (the module exposing BACKEND)")
            continue
        section = sections.get(point.name)
        register(point.name, point.module, section=None if section is None else section.value)
        _PLUGINS[point.name] = origin
        if section is not None:
            _PLUGIN_SECTIONS[point.name] = _origin(section)


def plugins() -> dict[str, str]:
    """``{name: where it comes from}`` of the backends registered by other distributions."""
    _read_plugins()
    return dict(_PLUGINS)


def names() -> tuple[str, ...]:
    _read_plugins()
    return tuple(_REGISTRY)


def titles() -> dict[str, str]:
    """``{name: title}`` of every registered backend, in registration order (the name where none was given)."""
    return {name: _TITLES.get(name, name) for name in names()}


def sections(among: Iterable[str] | None = None) -> dict[str, type]:
    """``{name: record}`` of the backends (or ``among``) with a ``<name>:`` section; imports no backend."""
    wanted = set(names() if among is None else among)
    found: dict[str, type] = {}
    for name, where in _SECTIONS.items():
        if name in wanted:
            module, _, record = where.partition(":")
            if name not in _PLUGINS:
                found[name] = getattr(importlib.import_module(module), record)
                continue
            try:
                found[name] = getattr(_import_plugin(module), record)
            except (ImportError, AttributeError) as exc:
                why = f"{type(exc).__name__}: {exc}" if isinstance(exc, AttributeError) else str(exc)
                _warn_once(f"the {name!r} config section is ignored: {_broken(name, why, _PLUGIN_SECTIONS[name])}")
    return found


def listed_reader(name: str) -> Callable[[str], dict[str, Any] | None] | None:
    """What reads a job of backend ``name`` from its own record by ``JobRecord.attach_id``; None: history only."""
    where = _LISTED.get(name)
    if where is None:
        return None
    module, _, function = where.partition(":")
    reader: Callable[[str], dict[str, Any] | None] = getattr(importlib.import_module(module), function)
    return reader


def commands() -> dict[str, tuple[str, str]]:
    """``{name: ("module:attr", help line)}`` of the backends' CLI commands, each imported when it runs."""
    return dict(_COMMANDS)


def states_reader(name: str) -> Callable[..., dict[str, str]] | None:
    """Backend ``name``'s batch ``states_now(job_ids, *, region, project)``, loaded without it, else None."""
    module, _, function = _STATES_AT_ONCE.get(name, "").partition(":")
    return getattr(importlib.import_module(module), function) if module else None


def attaches_by_name(name: str) -> bool:
    """Whether backend ``name``'s ``attach`` takes the full name history records (``JobRecord.name``) rather
    than the short id; known without importing the backend (``status`` reads it for every job)."""
    return name in _BY_NAME


def clouds() -> tuple[str, ...]:
    """The backends that run on someone else's machines (every one but ``local``)."""
    return tuple(n for n in names() if n != LOCAL)


def sdk_modules() -> dict[str, str]:
    """``{top-level module: backend}`` of every backend's cloud libraries: the backend's extra installs it."""
    return dict(_SDK)


def _broken(name: str, why: str, origin: str | None = None) -> str:
    origin = origin or _PLUGINS[name]
    dist = origin.rpartition(" of distribution ")[2]
    return f"{origin} cannot be loaded ({why}); reinstall or uninstall {dist}"


#: How long someone else's module may take to import before its backend is given up (a bound, not a wait)
PLUGIN_IMPORT_S = 5.0


class _Slow(BaseException):
    """The bound on a plugin's import ran out (raised in its code by SIGALRM)."""


def _import_plugin(module: str) -> Any:
    """Someone else's module; :class:`ImportError` for whatever its code raises (``SystemExit`` included) and for an
    import longer than :data:`PLUGIN_IMPORT_S` (SIGALRM, main thread only). A real Ctrl-C stays the user's."""
    bounded = threading.current_thread() is threading.main_thread() and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    interrupted: list[int] = []
    if bounded:

        def ctrl_c(*_: Any) -> None:
            interrupted.append(1)
            raise KeyboardInterrupt

        def too_slow(*_: Any) -> None:
            raise _Slow

        old = signal.signal(signal.SIGALRM, too_slow), signal.getsignal(signal.SIGINT)
        if old[1] is signal.default_int_handler:
            signal.signal(signal.SIGINT, ctrl_c)
        signal.setitimer(signal.ITIMER_REAL, PLUGIN_IMPORT_S)
    try:
        return importlib.import_module(module)
    except _Slow:
        raise ImportError(f"it took more than {PLUGIN_IMPORT_S:.0f} s to import") from None
    except BaseException as exc:
        if interrupted:
            raise
        raise ImportError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from None
    finally:
        if bounded:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old[0])
            signal.signal(signal.SIGINT, old[1])


_MISSING = object()


def rules(name: str) -> BackendRules:
    """The backend ``name`` as the config sees it: its facts, capabilities and name rules (its module's
    ``BACKEND``, imported on first use). The same object is the runtime backend above ``spec.py``."""
    if name not in names():
        raise UsageError(f"unknown backend {name!r}; allowed: {', '.join(_REGISTRY)}")
    if name not in _PLUGINS:
        builtin: BackendRules = importlib.import_module(_REGISTRY[name]).BACKEND
        return builtin
    try:  # someone else's code: whatever it raises or holds is one line, not a traceback
        backend = getattr(_import_plugin(_REGISTRY[name]), "BACKEND", _MISSING)
    except ImportError as exc:
        raise PluginError(_broken(name, str(exc))) from None
    if backend is _MISSING:
        raise PluginError(_broken(name, "it has no BACKEND"))
    if not isinstance(getattr(backend, "name", None), str) or not all(
        callable(getattr(backend, method, None)) for method in ("parse_job_id", "attach", "submit", "render")
    ):
        raise PluginError(_broken(name, f"its BACKEND is {repr(backend)[:60]}, not a cloudtrain backend"))
    return cast("BackendRules", backend)


def check_plugins() -> None:
    """Load every plugin, so that a broken one is one warning line here (``--help``, ``validate``) rather
    than news only to the command that uses it; a machine without plugins pays nothing."""
    for name in plugins():
        try:
            rules(name)
        except PluginError as exc:
            _warn_once(str(exc))


def usable() -> Iterator[tuple[str, BackendRules]]:
    """``(name, rules)`` of every registered backend, in registration order; a plugin that cannot be
    loaded is one warning line and skipped, so the others still answer (a job id, a config format)."""
    for name in names():
        try:
            yield name, rules(name)
        except PluginError as exc:
            _warn_once(str(exc))


def parse_job_id(text: str) -> tuple[str, str, dict[str, str]] | None:
    """``(backend, short id, location)`` for a full job name any backend recognises, else None."""
    for name, backend in usable():
        found = backend.parse_job_id(text)
        if found is not None:
            return (name, *found)
    return None


#: Each cloud's libraries are an extra named as its backend, imported lazily; when one is missing,
#: :func:`missing_extra` turns the ``ModuleNotFoundError`` into one line naming the install command (exit 2).
F = TypeVar("F", bound=Callable[..., Any])

#: top-level module → (extra, what it is for a person), for the extras that are no backend's
OTHER_EXTRAS = {
    "matplotlib": ("report", "run report"),
    "tensorboard": ("tensorboard", "TensorBoard"),
}


def extra_of(module: str) -> tuple[str, str] | None:
    """``(extra, its title)`` of a top-level module: a backend's cloud libraries are its extra; else None."""
    if module in OTHER_EXTRAS:
        return OTHER_EXTRAS[module]
    backend = sdk_modules().get(module)
    return None if backend is None else (backend, rules(backend).words.title)


def missing_extra(exc: BaseException) -> MissingExtra | None:
    """The error naming the install command when ``exc`` is a missing cloud SDK module, else None."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    found = extra_of(exc.name.partition(".")[0])
    if found is None:
        return None
    extra, what = found
    return MissingExtra(
        f"the {what} libraries are not installed (no module {exc.name!r})",
        hint=f"pip install 'cloudtrain[{extra}]'",
        extra=extra,
    )


@contextlib.contextmanager
def required() -> Iterator[None]:
    """A missing cloud SDK inside the block raises :class:`MissingExtra` instead of ModuleNotFoundError."""
    try:
        yield
    except ModuleNotFoundError as exc:
        error = missing_extra(exc)
        if error is None:
            raise
        raise error from exc


def requiring(func: F) -> F:
    """:func:`required` around a function (the Python API's entry points)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with required():
            return func(*args, **kwargs)

    return cast(F, wrapper)  # functools.wraps keeps func's signature: the wrapper is called as func is
