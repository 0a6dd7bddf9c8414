"""Typed, frozen config records, and the one reader of YAML data into them: pydantic's interface and error words
(tests/config/test_records.py compares the two) without pydantic's import and validator build, most of a dry run's own
time. :func:`json_schema` writes pydantic's JSON Schema of the records."""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, TypeVar, cast

#: ``Annotated[int, STRICT]``: no coercion (pydantic's ``Strict()``).
STRICT: Any = type("Strict", (), {"__repr__": lambda self: "Strict()"})()
StrictStr = Annotated[str, STRICT]
StrictInt = Annotated[int, STRICT]
StrictFloat = Annotated[float, STRICT]
StrictBool = Annotated[bool, STRICT]

_REQUIRED: Any = type("Required", (), {"__repr__": lambda self: "REQUIRED"})()


class FieldSpec:
    """A field of a record: its annotation (bounds inside it), default, description; inside ``Annotated``,
    its bounds. Written ``Field(…)`` in the schema, as in pydantic."""

    __slots__ = ("annotation", "default", "default_factory", "description", "ge", "gt", "le", "pattern")

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
        self.annotation: Any = None
        self.default, self.default_factory, self.description = default, default_factory, description
        self.ge, self.gt, self.le, self.pattern = ge, gt, le, pattern

    def bounds(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("ge", "gt", "le", "pattern") if getattr(self, k) is not None}

    def of(self, annotation: Any) -> FieldSpec:
        """This field's default and description for a field of ``annotation``, its bounds moved inside that."""
        spec, bounds = (
            FieldSpec(self.default, default_factory=self.default_factory, description=self.description),
            self.bounds(),
        )
        spec.annotation = Annotated[annotation, FieldSpec(**bounds)] if bounds else annotation
        return spec

    def is_required(self) -> bool:
        return self.default is _REQUIRED and self.default_factory is None

    def get_default(self) -> Any:
        return self.default_factory() if self.default_factory is not None else self.default


#: As pydantic's ``Field``: a field's default (any type, for the checker) with its description or bounds.
Field: Callable[..., Any] = FieldSpec


class BeforeValidator:
    """``Annotated[T, BeforeValidator(func)]``: ``func`` turns the raw value into one ``T`` accepts."""

    __slots__ = ("func",)

    def __init__(self, func: Callable[[Any], Any]) -> None:
        self.func = func


def no_float_version(value: object) -> object:
    """``tensorflow: 2.10`` is the float 2.1 in YAML: the version fields refuse numbers and ask for quotes."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise ValueError(f'YAML read this version as the number {value!r}; quote it, e.g. "{value}"')
    return value


_R = TypeVar("_R", bound="Record")


class Record:
    """A frozen record of annotated fields; unknown keys are refused, strings must come stripped."""

    model_fields: ClassVar[dict[str, FieldSpec]] = {}
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
            fields[name] = (default if isinstance(default, FieldSpec) else FieldSpec(default)).of(annotation)
            if name in cls.__dict__:
                delattr(cls, name)
        cls.model_fields = fields

    def __init__(self, **data: Any) -> None:
        """Build from keyword values, validated as a config's are (:class:`Invalid` if they are not)."""
        object.__setattr__(self, "__dict__", dict(validate(type(self), data).__dict__))

    @property
    def model_fields_set(self) -> set[str]:
        return set(self.__dict__["__fields_set__"])

    def model_dump(self, *, exclude: set[str] | None = None, exclude_none: bool = False) -> dict[str, Any]:
        out = {}
        for name in self.model_fields:
            value = getattr(self, name)
            if not ((exclude and name in exclude) or (exclude_none and value is None)):
                out[name] = _dump(value, exclude_none)
        return out

    def model_copy(self: _R, *, update: dict[str, Any] | None = None) -> _R:
        """A copy with ``update``'s values set as given (not validated, as pydantic's ``model_copy``)."""
        return make(type(self), {**self.__dict__, **(update or {})}, self.model_fields_set | set(update or ()))

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.model_fields)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{name}={getattr(self, name)!r}' for name in self.model_fields)})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} is frozen: use model_copy(update={{{name!r}: …}})")

    __delattr__ = __setattr__  # type: ignore[assignment]  # the same refusal; only the signatures differ


def make(cls: type[_R], values: dict[str, Any], fields_set: set[str]) -> _R:
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


class Invalid(ValueError):
    """The data is not valid: every error, each as pydantic lists one (``type``, ``loc``, ``msg``, ``input``,
    ``ctx``), which :mod:`cloudtrain.config.load` words as one line per value."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(errors)
        self.errors = errors


RecordT = TypeVar("RecordT", bound=Record)
_FAIL: Any = type("Failed", (), {"__repr__": lambda self: "FAILED"})()
Loc = tuple[str | int, ...]


def validate(cls: type[RecordT], data: Any) -> RecordT:
    """``data`` (plain YAML values) as a ``cls`` record, strings stripped; :class:`Invalid` with every error."""
    errors: list[dict[str, Any]] = []
    record = _model(cls, data, (), errors)
    if errors:
        raise Invalid(errors)
    return cast(RecordT, record)


def _error(errors: list[dict[str, Any]], kind: str, loc: Loc, msg: str, value: Any, **ctx: Any) -> Any:
    errors.append({"type": kind, "loc": loc, "msg": msg, "input": value, **({"ctx": ctx} if ctx else {})})
    return _FAIL


def _model(cls: type[Record], data: Any, loc: Loc, errors: list[dict[str, Any]]) -> Any:
    if type(data) is cls:
        return data
    if type(data) is not dict:
        words = f"Input should be a valid dictionary or instance of {cls.__name__}"
        return _error(errors, "model_type", loc, words, data, class_name=cls.__name__)
    before, values = len(errors), {}
    for name, info in cls.model_fields.items():
        if name in data:
            values[name] = _value(info.annotation, data[name], (*loc, name), errors)
        elif info.is_required():
            _error(errors, "missing", (*loc, name), "Field required", data)
        else:
            values[name] = info.get_default()
    for key in data:
        if key not in cls.model_fields:
            _error(errors, "extra_forbidden", (*loc, key), "Extra inputs are not permitted", data[key])
    return _FAIL if len(errors) > before else make(cls, values, set(data))


#: The plain types and containers: pydantic's error kind and words when a value is not one.
_TYPES: dict[Any, tuple[str, str]] = {
    str: ("string_type", "a valid string"),
    int: ("int_type", "a valid integer"),
    float: ("float_type", "a valid number"),
    bool: ("bool_type", "a valid boolean"),
    list: ("list_type", "a valid list"),
    dict: ("dict_type", "a valid dictionary"),
}


def _value(annotation: Any, value: Any, loc: Loc, errors: list[dict[str, Any]]) -> Any:
    """``value`` as ``annotation`` takes it (strict types, strings stripped), or ``_FAIL`` with its errors."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return _annotated(args[0], args[1:], value, loc, errors)
    if origin in (typing.Union, types.UnionType):
        return _union(args, value, loc, errors)
    if origin is typing.Literal:
        if any(type(value) is type(allowed) and value == allowed for allowed in args):
            return value
        shown = [repr(a) for a in args]
        expected = f"{', '.join(shown[:-1])} or {shown[-1]}" if len(shown) > 1 else shown[0]
        return _error(errors, "literal_error", loc, f"Input should be {expected}", value, expected=expected)
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return _model(annotation, value, loc, errors)
    if annotation is Any:
        return value
    if annotation is None or annotation is type(None):
        return value if value is None else _error(errors, "none_required", loc, "Input should be None", value)
    kind = origin or annotation
    if type(value) is not kind and not (kind is float and type(value) is int):
        kind_name, words = _TYPES[kind]
        return _error(errors, kind_name, loc, f"Input should be {words}", value)
    if kind is str:
        return value.strip()
    if kind is list:
        items = [_value(args[0], v, (*loc, i), errors) for i, v in enumerate(value)]
        return _FAIL if _FAIL in items else items
    if kind is dict:
        pairs = [
            (_value(args[0], k, (*loc, k, "[key]"), errors), _value(args[1], v, (*loc, k), errors))
            for k, v in value.items()
        ]
        return _FAIL if any(_FAIL in pair for pair in pairs) else dict(pairs)
    return value


def _annotated(inner: Any, metadata: tuple[Any, ...], raw: Any, loc: Loc, errors: list[dict[str, Any]]) -> Any:
    value = raw
    for item in reversed(metadata):  # the outermost validator first, as pydantic runs them
        if isinstance(item, BeforeValidator):
            try:
                value = item.func(value)
            except ValueError as exc:
                return _error(errors, "value_error", loc, f"Value error, {exc}", value, error=exc)
    value = _value(inner, value, loc, errors)
    for item in metadata:
        if isinstance(item, FieldSpec) and value is not _FAIL:
            value = _bounds(item, value, raw, loc, errors)
    return value


def _union(members: tuple[Any, ...], value: Any, loc: Loc, errors: list[dict[str, Any]]) -> Any:
    """The first member that takes ``value`` (None, where the union allows it, before any); else every
    member's errors (pydantic's, for a value that may be None, leave out that it is not None)."""
    others = [m for m in members if m is not type(None)]
    if value is None and len(others) < len(members):
        return None
    tried: list[dict[str, Any]] = []
    for member in others:
        result = _value(member, value, loc, tried)
        if result is not _FAIL:
            return result
    errors.extend(tried)
    return _FAIL


def _bounds(field: FieldSpec, value: Any, raw: Any, loc: Loc, errors: list[dict[str, Any]]) -> Any:
    """``value`` within the field's bounds, or its error (about ``raw``, the value as written: ``0s``)."""
    if type(value) in (int, float):
        for kind, key, ok, words in (
            ("greater_than_equal", "ge", value >= (field.ge or 0), "greater than or equal to"),
            ("greater_than", "gt", value > (field.gt or 0), "greater than"),
            ("less_than_equal", "le", value <= (field.le or 0), "less than or equal to"),
        ):
            limit = getattr(field, key)
            if limit is not None and not ok:
                return _error(errors, kind, loc, f"Input should be {words} {limit}", raw, **{key: limit})
    if field.pattern is not None and type(value) is str and not re.search(field.pattern, value):
        words = f"String should match pattern '{field.pattern}'"
        return _error(errors, "string_pattern_mismatch", loc, words, raw, pattern=field.pattern)
    return value


#: A bound's JSON Schema key on a plain number or string; ``gt`` as written where pydantic keeps it.
_BOUND_KEYS = {"ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "pattern": "pattern"}
_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def json_schema(cls: type[Record]) -> dict[str, Any]:
    """The JSON Schema of a record class, as pydantic writes its model's (``cloudtrain schema``, the reference)."""
    defs: dict[str, Any] = {}
    top = _record_schema(cls, defs)
    schema: dict[str, Any] = _sorted({"$defs": defs, **top} if defs else top)
    return schema


def _sorted(value: Any, key: str = "") -> Any:
    """Keys in pydantic's order: sorted, but a record's ``properties`` in field order and values as they are."""
    if isinstance(value, list) and key not in ("default", "enum", "const"):
        return [_sorted(v) for v in value]
    if not isinstance(value, dict) or key in ("default", "const"):
        return value
    items = value.items() if key == "properties" else sorted(value.items())
    return {k: _sorted(v, "" if key == "properties" else k) for k, v in items}


def _record_schema(cls: type[Record], defs: dict[str, Any]) -> dict[str, Any]:
    properties = {}
    for name, info in cls.model_fields.items():
        field = _schema_of(info.annotation, defs)
        if not info.is_required() and info.default_factory is None:
            field["default"] = info.default
        if info.description:
            field["description"] = info.description
        if not ("$ref" in field or [*field.get("anyOf", [{}])[:1][0]] == ["$ref"]):
            field["title"] = name.replace("_", " ").title()
        properties[name] = field
    doc = cls.__dict__.get("__doc__")
    schema: dict[str, Any] = {"additionalProperties": False, **({"description": doc} if doc else {})}
    required = [name for name, info in cls.model_fields.items() if info.is_required()]
    schema.update(properties=properties, **({"required": required} if required else {}))
    return {**schema, "title": cls.__name__, "type": "object"}


def _schema_of(annotation: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        schema = _schema_of(args[0], defs)
        wrapped = "anyOf" in schema or any(isinstance(m, BeforeValidator) for m in args[1:])
        for item in args[1:]:
            if isinstance(item, FieldSpec):
                schema.update({key if wrapped else _BOUND_KEYS[key]: v for key, v in item.bounds().items()})
        return schema
    if origin in (typing.Union, types.UnionType):
        members = [_schema_of(a, defs) for a in args]
        return {"anyOf": [one for m in members for one in (m["anyOf"] if [*m] == ["anyOf"] else [m])]}
    if origin is typing.Literal:
        kinds = {type(a) for a in args}
        typed = {"type": _JSON_TYPES[kinds.pop()]} if len(kinds) == 1 else {}
        return {"const": args[0], **typed} if len(args) == 1 else {"enum": list(args), **typed}
    if origin is list:
        return {"items": _schema_of(args[0], defs), "type": "array"}
    if origin is dict:
        values = True if args[1] is Any else _schema_of(args[1], defs)
        return {"additionalProperties": values, "type": "object"}
    if isinstance(annotation, type) and issubclass(annotation, Record):
        if annotation.__name__ not in defs:
            defs[annotation.__name__] = {}  # taken: a record inside itself refers to it
            defs[annotation.__name__] = _record_schema(annotation, defs)
        return {"$ref": f"#/$defs/{annotation.__name__}"}
    return {} if annotation is Any else {"type": _JSON_TYPES[annotation]}
