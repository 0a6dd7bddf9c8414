"""Which optional install (``pip install 'cloudtrain[EXTRA]'``) provides a cloud SDK module.

Each cloud's libraries are an extra (pyproject.toml), named as its backend: a user of one cloud
installs only that cloud's. The registry (:func:`cloudtrain.backends.register`, ``sdk=``) says
which top-level modules each backend's extra installs. They are imported lazily where used; when
one is missing, :func:`missing_extra` turns Python's ``ModuleNotFoundError`` into the one line
that names the install command (exit 2)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

from cloudtrain.backend_rules import rules, sdk_modules
from cloudtrain.errors import MissingExtra

F = TypeVar("F", bound=Callable[..., Any])

#: top-level module → (extra, what it is for a person), for the extras that are no backend's
OTHER_EXTRAS = {
    "matplotlib": ("report", "run report"),
    "tensorboard": ("tensorboard", "TensorBoard"),
}


def extra_of(module: str) -> tuple[str, str] | None:
    """``(extra, what it is for a person)`` of a top-level module, else None: a backend's cloud
    libraries are that backend's extra, titled as the backend (asked only once one is missing)."""
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
