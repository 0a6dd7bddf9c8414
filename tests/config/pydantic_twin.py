"""The schema's pydantic twin, the test oracle of :mod:`cloudtrain.config.records`: the same records as
pydantic models (same names, fields, bounds, defaults, descriptions), so the tests can check that the one
reader of the config accepts what pydantic accepts, with the same values, and refuses the rest with
pydantic's own errors, and that :func:`~cloudtrain.config.records.json_schema` is pydantic's JSON Schema.
"""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypeVar, cast

from cloudtrain.config.records import STRICT, BeforeValidator, FieldSpec, Record, make

__all__ = ["errors_of", "model_of", "validate"]

RecordT = TypeVar("RecordT", bound=Record)


def errors_of(cls: type[Record], data: Any) -> list[dict[str, Any]]:
    """pydantic's errors for ``data`` read as ``cls`` ([] when it takes it), as ``ValidationError.errors`` has them."""
    from pydantic import ValidationError

    try:
        model_of(cls).model_validate(data)
    except ValidationError as exc:
        return [dict(e) for e in exc.errors(include_url=False)]
    return []


def validate(cls: type[RecordT], data: Any) -> RecordT:
    """``data`` read by the pydantic model of ``cls``, as a record (:class:`ValidationError` when invalid)."""
    return cast(RecordT, _record(model_of(cls).model_validate(data)))


_RECORD_OF: dict[type, type[Record]] = {}
_MODEL_OF: dict[type[Record], Any] = {}  # built once per record class


def model_of(cls: type[Record]) -> Any:
    """The pydantic model of a record class: same name, fields, bounds, defaults and descriptions."""
    if cls in _MODEL_OF:
        return _MODEL_OF[cls]
    import pydantic

    with _no_plugins():
        fields: dict[str, Any] = {
            name: (_annotation(info.annotation), _field(info)) for name, info in cls.model_fields.items()
        }
        config = pydantic.ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)
        doc: str | None = cls.__dict__.get("__doc__")
        model = pydantic.create_model(cls.__name__, __config__=config, __doc__=doc, __module__=cls.__module__, **fields)
    _RECORD_OF[model] = cls
    _MODEL_OF[cls] = model
    return model


@contextmanager
def _no_plugins() -> Iterator[None]:
    """cloudtrain's models take no third-party pydantic plugins; looking for them scans the entry points of
    every installed distribution (~50 ms with TensorFlow and the cloud SDKs installed). Off while the
    models are built, then as it was, so a job's own code is unaffected."""
    setting = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    try:
        yield
    finally:
        if setting is None:
            del os.environ["PYDANTIC_DISABLE_PLUGINS"]
        else:
            os.environ["PYDANTIC_DISABLE_PLUGINS"] = setting


def _annotation(annotation: Any) -> Any:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return Annotated[tuple([_annotation(args[0]), *(_metadata(m) for m in args[1:])])]
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return model_of(annotation)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(_annotation(a) for a in args)]  # noqa: UP007 - built from a tuple at run time
    if origin in (list, dict):
        return origin[tuple(_annotation(a) for a in args)]
    if origin not in (None, typing.Literal):
        raise TypeError(f"no pydantic form for {annotation!r}")
    return annotation  # str, int, Any, NoneType, Literal[…]


def _metadata(item: Any) -> Any:
    import pydantic

    if item is STRICT:
        return pydantic.Strict()
    if isinstance(item, BeforeValidator):
        return pydantic.BeforeValidator(item.func)
    if isinstance(item, FieldSpec):
        return pydantic.Field(**item.bounds())
    return item


def _field(info: FieldSpec) -> Any:
    import pydantic

    factory = info.default_factory
    if isinstance(factory, type) and issubclass(factory, Record):
        factory = model_of(factory)
    if factory is not None:
        return pydantic.Field(default_factory=factory, description=info.description)
    if info.is_required():
        return pydantic.Field(description=info.description)
    return pydantic.Field(info.default, description=info.description)


def _record(model: Any) -> Record:
    cls = _RECORD_OF[type(model)]
    return make(cls, {name: _plain(getattr(model, name)) for name in cls.model_fields}, model.model_fields_set)


def _plain(value: Any) -> Any:
    if type(value) in _RECORD_OF:
        return _record(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
