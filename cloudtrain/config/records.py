"""Typed, frozen config records that read YAML data without importing pydantic.

The schema (:mod:`cloudtrain.config.schema`) is written as pydantic models are: annotated
fields, ``Field(default, description=…, ge=…)``, ``StrictStr``, ``BeforeValidator``. Its
classes are records (:class:`Record`), which keep pydantic's reading interface (``model_fields``,
``model_fields_set``, ``model_dump``, ``model_copy``) but cost nothing to define: importing
pydantic and building its validators was most of a dry-run's own time.

:func:`read` checks plain YAML data against a record class. It accepts only what pydantic
(strict types, unknown keys forbidden, strings stripped) accepts, with the same result; on
anything else it raises :class:`Mismatch`, and :mod:`cloudtrain.config.twin` lets the
pydantic twin of the schema decide, so every error is pydantic's, word for word.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar

__all__ = [
    "BeforeValidator",
    "Field",
    "FieldSpec",
    "Mismatch",
    "Record",
    "StrictBool",
    "StrictFloat",
    "StrictInt",
    "StrictStr",
    "no_float_version",
]


class _StrictMarker:
    """``Annotated[int, STRICT]``: no coercion (pydantic's ``Strict()``)."""

    def __repr__(self) -> str:
        return "Strict()"


STRICT = _StrictMarker()
StrictStr = Annotated[str, STRICT]
StrictInt = Annotated[int, STRICT]
StrictFloat = Annotated[float, STRICT]
StrictBool = Annotated[bool, STRICT]

_REQUIRED: Any = type("Required", (), {"__repr__": lambda self: "REQUIRED"})()


class FieldSpec:
    """A field's default and description (as a default value), or its bounds (inside ``Annotated``).
    Written ``Field(…)`` in the schema, as in pydantic."""

    __slots__ = ("default", "default_factory", "description", "ge", "gt", "le", "pattern")

    def __init__(
        self,
        default: Any = _REQUIRED,
        *,
        default_factory: Callable[[], Any] | None = None,
        description: str | None = None,
        ge: float | None = None,
        gt: float | None = None,
        le: float | None = None,
        pattern: str | None = None,
    ) -> None:
        self.default, self.default_factory, self.description = default, default_factory, description
        self.ge, self.gt, self.le, self.pattern = ge, gt, le, pattern

    def bounds(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("ge", "gt", "le", "pattern") if getattr(self, k) is not None}


if TYPE_CHECKING:

    def Field(
        default: Any = ...,
        *,
        default_factory: Callable[[], Any] | None = None,
        description: str | None = None,
        ge: float | None = None,
        gt: float | None = None,
        le: float | None = None,
        pattern: str | None = None,
    ) -> Any:
        """As pydantic's: a field's default (any type, for the checker) with its description or bounds."""
        ...

else:
    Field = FieldSpec


class BeforeValidator:
    """``Annotated[T, BeforeValidator(func)]``: ``func`` turns the raw value into one ``T`` accepts."""

    __slots__ = ("func",)

    def __init__(self, func: Callable[[Any], Any]) -> None:
        self.func = func


def no_float_version(value: object) -> object:
    """``tensorflow: 2.10`` is the float 2.1 in YAML: refuse numbers, ask for quotes. A validator of the
    schema's and the backends' sections' version fields."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ValueError(f'YAML read this version as the number {value!r}; quote it, e.g. "{value}"')
    return value


class FieldInfo:
    """One field of a record: its annotation (bounds included), default, description."""

    __slots__ = ("annotation", "default", "default_factory", "description")

    def __init__(self, annotation: Any, field: FieldSpec) -> None:
        bounds = field.bounds()
        self.annotation = Annotated[annotation, FieldSpec(**bounds)] if bounds else annotation
        self.default, self.default_factory, self.description = field.default, field.default_factory, field.description

    def is_required(self) -> bool:
        return self.default is _REQUIRED and self.default_factory is None

    def get_default(self) -> Any:
        if self.default_factory is not None:
            return self.default_factory()
        return self.default


class Mismatch(Exception):
    """The data is not plainly valid: let pydantic decide (and word the error)."""


_R = TypeVar("_R", bound="Record")


class Record:
    """A frozen record of annotated fields; unknown keys are refused, strings must come stripped."""

    model_fields: ClassVar[dict[str, FieldInfo]] = {}
    #: A backend's ``<name>:`` section record: the key's description in the config schema.
    section_description: ClassVar[str] = ""
    #: A section every config has, with its defaults where the file has no ``<name>:`` key; False: None there.
    section_always: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = dict(cls.model_fields)
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if typing.get_origin(annotation) is ClassVar or annotation is ClassVar:
                continue
            default = cls.__dict__.get(name, _REQUIRED)
            fields[name] = FieldInfo(annotation, default if isinstance(default, FieldSpec) else FieldSpec(default))
            if name in cls.__dict__:
                delattr(cls, name)
        cls.model_fields = fields

    def __init__(self, **data: Any) -> None:
        """Build from keyword values that are plainly valid, else :class:`Mismatch`. Config data
        goes through :func:`cloudtrain.config.twin.validate`, which words pydantic's errors
        (records never import the twin: it imports them)."""
        _fill(self, read(type(self), data))

    @property
    def model_fields_set(self) -> set[str]:
        return set(self.__dict__["__fields_set__"])

    def model_dump(self, *, exclude: set[str] | None = None, exclude_none: bool = False) -> dict[str, Any]:
        out = {}
        for name in self.model_fields:
            value = getattr(self, name)
            if (exclude and name in exclude) or (exclude_none and value is None):
                continue
            out[name] = _dump(value, exclude_none)
        return out

    def model_copy(self: _R, *, update: dict[str, Any] | None = None) -> _R:
        """A copy with ``update``'s values set as given (not validated, as pydantic's ``model_copy``)."""
        copy = object.__new__(type(self))
        object.__setattr__(
            copy,
            "__dict__",
            {**self.__dict__, **(update or {}), "__fields_set__": self.model_fields_set | set(update or ())},
        )
        return copy

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.model_fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and type(other) is type(self) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{name}={getattr(self, name)!r}' for name in self.model_fields)})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} is frozen: use model_copy(update={{{name!r}: …}})")

    __delattr__ = __setattr__  # type: ignore[assignment]  # the same refusal; only the signatures differ


def _fill(record: Record, source: Record) -> None:
    object.__setattr__(record, "__dict__", dict(source.__dict__))


def make(cls: type[Record], values: dict[str, Any], fields_set: set[str]) -> Record:
    """A record with these (already valid) values, without validating them again."""
    record = object.__new__(cls)
    object.__setattr__(record, "__dict__", {**values, "__fields_set__": frozenset(fields_set)})
    return record


def _dump(value: Any, exclude_none: bool) -> Any:
    if isinstance(value, Record):
        return value.model_dump(exclude_none=exclude_none)
    if isinstance(value, list):
        return [_dump(v, exclude_none) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v, exclude_none) for k, v in value.items()}
    return value


def read(cls: type[Record], data: Any) -> Record:
    """``data`` (plain YAML values) as a ``cls`` record; :class:`Mismatch` when not plainly valid."""
    if type(data) is not dict or not all(type(k) is str and k in cls.model_fields for k in data):
        raise Mismatch
    values = {}
    for name, info in cls.model_fields.items():
        if name in data:
            values[name] = _check(info.annotation, data[name])
        elif info.is_required():
            raise Mismatch
        else:
            values[name] = info.get_default()
    return make(cls, values, set(data))


_PLAIN = {str, int, float, bool}


def _check(annotation: Any, value: Any) -> Any:
    """``value`` as ``annotation`` takes it, or :class:`Mismatch`."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        inner, *metadata = typing.get_args(annotation)
        for item in reversed(metadata):
            if isinstance(item, BeforeValidator):
                try:
                    value = item.func(value)
                except Exception:
                    raise Mismatch from None
        value = _check(inner, value)
        for item in metadata:
            if isinstance(item, FieldSpec):
                _check_bounds(item, value)
        return value
    if annotation in _PLAIN:
        if type(value) is not annotation or (annotation is str and value.strip() != value):
            raise Mismatch
        return value
    if annotation is None or annotation is type(None):
        if value is not None:
            raise Mismatch
        return value
    if annotation is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        for member in typing.get_args(annotation):
            try:
                return _check(member, value)
            except Mismatch:
                continue
        raise Mismatch
    if origin is typing.Literal:
        if not any(type(value) is type(allowed) and value == allowed for allowed in typing.get_args(annotation)):
            raise Mismatch
        return value
    if origin is list and type(value) is list:
        (item,) = typing.get_args(annotation)
        return [_check(item, v) for v in value]
    if origin is dict and type(value) is dict:
        key, item = typing.get_args(annotation)
        return {_check(key, k): _check(item, v) for k, v in value.items()}
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return value if type(value) is annotation else read(annotation, value)
    raise Mismatch


def _check_bounds(field: FieldSpec, value: Any) -> None:
    if type(value) in (int, float) and not (
        (field.ge is None or value >= field.ge)
        and (field.gt is None or value > field.gt)
        and (field.le is None or value <= field.le)
    ):
        raise Mismatch
    if field.pattern is not None and (type(value) is not str or "\n" in value or not re.search(field.pattern, value)):
        raise Mismatch
