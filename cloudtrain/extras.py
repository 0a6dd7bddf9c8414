"""Which optional install (``pip install 'cloudtrain[EXTRA]'``) provides a cloud SDK module.

Each cloud's libraries are an extra (pyproject.toml): a user of one cloud installs only that cloud's.
They are imported lazily where used; when one is missing, :func:`missing_extra` turns Python's
``ModuleNotFoundError`` into the one line that names the install command (exit 2)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

from cloudtrain.errors import MissingExtra

F = TypeVar("F", bound=Callable)

#: top-level module → (extra, what it is for a person)
MODULES = {
    "google": ("vertex", "Vertex AI"),  # google.cloud.*, google.api_core, google.auth, google.protobuf
    "grpc": ("vertex", "Vertex AI"),
    "boto3": ("sagemaker", "SageMaker"),
    "botocore": ("sagemaker", "SageMaker"),
    "sagemaker_core": ("sagemaker", "SageMaker"),
    "matplotlib": ("report", "run report"),
}


def missing_extra(exc: BaseException) -> MissingExtra | None:
    """The error naming the install command when ``exc`` is a missing cloud SDK module, else None."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    found = MODULES.get(exc.name.partition(".")[0])
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
