"""YAML file (+ ``--set`` overrides) → validated :class:`JobConfig`, or one actionable error."""

from __future__ import annotations

import copy
import dataclasses
import logging
import os
import stat
import types
import typing
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from cloudtrain import backend_rules
from cloudtrain.backend_rules import Capability
from cloudtrain.backend_rules.interface import BackendRules
from cloudtrain.config import crosscloud, fallback, records
from cloudtrain.config.checks import check_config
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.problems import Problems
from cloudtrain.config.project import find_project
from cloudtrain.config.records import Record
from cloudtrain.config.rules import usable
from cloudtrain.config.schema import JobConfig, registered_config
from cloudtrain.config.yaml12 import YAML11_BOOLEAN_WORDS, LoadedYaml, Path_, dotted, load_yaml, resolve_scalar
from cloudtrain.errors import ConfigError
from cloudtrain.secrets.masking import mask_text, secret_option

log = logging.getLogger("cloudtrain.config")


def load_config(
    path: str | Path, overrides: Sequence[str] = (), *, local: bool = False, strict: bool = False
) -> LoadedConfig:
    """Read, override, validate. ``local`` turns the job into a local run of the same target."""
    return load_document(read_document(path), overrides, local=local, strict=strict)


#: The largest config file read (real ones are a few KiB; a bigger one is a mistake or an attack).
MAX_CONFIG_BYTES = 2**20


def read_document(path: str | Path) -> LoadedYaml:
    """A config file as parsed YAML with its lines; one clear error when it cannot be read."""
    file = str(path)
    text = _read_text(Path(path), file)
    loaded = load_yaml(text, file)
    if loaded.data is None:
        raise ConfigError("the config is empty", file=file, hint="start from job_configs/gpu4.yaml")
    if not isinstance(loaded.data, dict):
        raise ConfigError("the config must be a mapping of keys to values", file=file, line=1)
    return loaded


def _read_text(path: Path, file: str) -> str:
    """The file's text: a regular file of at most MAX_CONFIG_BYTES, in UTF-8 (a device or FIFO is never opened)."""
    too_big = ConfigError(
        f"the config is larger than {MAX_CONFIG_BYTES // 2**20} MiB",
        file=file,
        hint="a job config is a few KiB; check that this is the right file",
    )
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            what = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a device, FIFO or socket)"
            raise ConfigError(f"the config is {what}", file=file, hint="point --config at a YAML file")
        if info.st_size > MAX_CONFIG_BYTES:
            raise too_big
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)  # bounded even where st_size says 0 (/proc)
    except FileNotFoundError:
        raise ConfigError(
            "config file not found", file=file, hint="check the path; examples are in job_configs/"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read config: {exc.strerror or exc.__class__.__name__}", file=file) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise too_big
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not UTF-8: byte {exc.start} (0x{raw[exc.start]:02x}) cannot be decoded",
            file=file,
            line=raw.count(b"\n", 0, exc.start) + 1,
            hint="save the file as UTF-8",
        ) from None


def load_document(
    loaded: LoadedYaml,
    overrides: Sequence[str] = (),
    *,
    local: bool = False,
    strict: bool = False,
    translate: bool = False,
    base: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """A parsed document (native, ML Engine ``trainingInput`` or Vertex ``CustomJobSpec``) → validated config.
    ``--set`` applies first, then old formats are translated and the config fitted to its cloud. ``strict``: a mapping
    line is an error. Every error is reported at once (:class:`~cloudtrain.config.problems.Problems`); unreadable YAML
    stops at once. ``translate``: the other cloud's machine type is mapped, not refused."""
    problems = Problems()
    for override in overrides:
        problems.run((), partial(apply_override, loaded, override))
    notes: list[str] = []
    translated = _translate_format(loaded, notes)
    if local and loaded.data.get("backend") != backend_rules.LOCAL:
        loaded.data.setdefault("target", loaded.data.get("backend"))
        loaded.data["backend"] = backend_rules.LOCAL
    name = loaded.data.get("backend")
    backend = backend_rules.rules(name) if isinstance(name, str) and name in backend_rules.names() else None
    if backend is not None:
        for path, message, hint in backend.fill_document(loaded.data):
            problems.add(loaded.error(path, message, hint))
    # Moving a file to the other cloud asks for its translation: --set backend=… (or target=…).
    translate = translate or translated or any(loaded.line_of((key,)) == 0 for key in ("backend", "target"))
    notes += _fit_to_cloud(loaded, name, backend, problems, translate=translate)
    project_source = None
    if backend is not None and "project" in backend.facts.required_keys:

        def find() -> None:
            nonlocal project_source
            project_source = _find_project(loaded, environ)

        problems.run(("project",), find)
    if strict and notes:
        problems.add(fallback.strict_refusal(notes))
    _one_accelerator_by_default(loaded.data)
    config = _validate(loaded, problems)
    if config is None:
        problems.fail()
    _warn_lost_digits(loaded)
    result = LoadedConfig(config, loaded, tuple(notes), project_source, base)
    check_config(result, problems)
    if config.fallback and config.backend in backend_rules.clouds():  # a local run needs no capacity
        load_candidate = partial(load_document, base=base or result.base_dir, environ=environ, strict=strict)
        result = dataclasses.replace(result, candidates=fallback.expand(result, load_candidate, strict=strict))
    return result


def _fit_to_cloud(
    loaded: LoadedYaml, name: Any, backend: BackendRules | None, problems: Problems, *, translate: bool
) -> list[str]:
    """The document fitted to the catalog and contract of its cloud (``JobConfig.cloud``, before a target's
    default): another cloud's machine is refused unless ``translate``; the mapping's notes."""
    cloud = (
        name
        if backend is None
        else loaded.data.get("target")
        if Capability.FOLLOWS_TARGET in backend.facts.capabilities
        else backend.facts.contract or name
    )
    writes = backend is not None and Capability.WRITES_BUCKETS in backend.facts.capabilities
    written = backend.facts.storage_schemes if backend is not None and writes else ()  # the buckets its jobs write
    if not translate and isinstance(cloud, str) and (refused := crosscloud.foreign_machine(loaded.data, cloud)):
        problems.add(loaded.error(refused.path, refused.message, refused.hint))
    try:
        loaded.data, notes = crosscloud.fit_to_cloud(loaded.data, cloud, translate=translate, schemes=written)
    except crosscloud.Refused as exc:
        problems.add(loaded.error(exc.path, exc.message, exc.hint))
        problems.raise_any()
    return notes


def _translate_format(loaded: LoadedYaml, notes: list[str]) -> bool:
    """A document in a backend's own format as cloudtrain's keys, its notes added; whether it was one."""
    if not set(loaded.data) - set(registered_config().model_fields):
        return False
    for _name, backend in usable():
        found = backend.translate(loaded)
        if found is not None:
            loaded.data, more = found
            notes += more
            return True
    return False


def _warn_lost_digits(loaded: LoadedYaml) -> None:
    """One warning per number YAML cannot hold as written (a float keeps about 17 digits:
    ``0.1000000000000000000001`` is 0.1). Hyperparameters are passed as the text written, so lose nothing."""
    for path, text in loaded.numbers.items():
        if not path or path[0] == "hyperparameters":
            continue
        value = resolve_scalar(text)
        if not isinstance(value, float) or value != value or value in (float("inf"), float("-inf")):
            continue
        from decimal import Decimal, InvalidOperation  # only a config with a float pays for it

        try:
            lost = Decimal(text.replace("_", "")) != Decimal(repr(value))
        except InvalidOperation:
            continue
        line = (
            f"warning: {loaded.origin(path)}: {dotted(path)}: YAML reads {_cut(text)} as the number {value!r} "
            f"(a float holds about 17 digits); {value!r} is used"
        )
        if lost and line not in _warned:  # once, though each fallback candidate is loaded again
            _warned.add(line)
            log.warning("%s", line)


_warned: set[str] = set()


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def _one_accelerator_by_default(data: Any) -> None:
    """``machine: {accelerator: T4}`` with no count means one, as gcloud's ``--accelerator``; a written count stays."""
    machine = data.get("machine") if isinstance(data, dict) else None
    if isinstance(machine, dict) and machine.get("accelerator") and "accelerator_count" not in machine:
        machine["accelerator_count"] = 1


def _validate(loaded: LoadedYaml, problems: Problems) -> JobConfig | None:
    """The config; on schema errors, each is collected and the config is read again without the failed
    values (defaults in their place), so the checks of the other fields still run. None when it cannot be."""
    try:
        return records.validate(registered_config(), loaded.data)
    except records.Invalid as exc:
        failed = _translate_all(exc.errors, loaded)
    for _, error in failed:
        problems.add(error)
    rest = copy.deepcopy(loaded.data)
    for path, _ in failed:
        _drop(rest, path)
    try:
        return records.validate(registered_config(), rest)
    except records.Invalid:
        return None  # a required value failed: nothing more can be checked


def _drop(data: Any, path: Path_) -> None:
    for part in path[:-1]:
        if not isinstance(data, (dict, list)) or not _has(data, part):
            return
        data = data[part] if isinstance(data, dict) else data[int(part)]
    if path and isinstance(data, dict):
        data.pop(path[-1], None)


def _find_project(loaded: LoadedYaml, environ: Mapping[str, str] | None) -> str | None:
    """Fill in ``project`` the way gcloud finds it; the source, for the summary."""
    configured = loaded.data.get("project")
    origin = (configured, loaded.origin(("project",))) if isinstance(configured, str) and configured else None
    project, source = find_project(None, origin, os.environ if environ is None else environ, Path.home())
    if project is None:
        raise loaded.error(
            ("project",),
            f"Vertex AI needs the Google Cloud project id; none given and none found in {source}",
            "add project: my-project, pass --project, or run `gcloud config set project my-project`",
        )
    loaded.data["project"] = project
    return source


#: The most dotted parts a --set key may have (cloudtrain's deepest keys have 4: sweep.params.lr.min).
MAX_SET_PARTS = 8


def apply_override(loaded: LoadedYaml, override: str) -> None:
    """``machine.accelerator_count=2`` → set that value, read with the same YAML 1.2 rules."""
    key, sep, raw = override.partition("=")
    if not sep or not key.strip():
        raise ConfigError(
            f"--set {override!r} is not KEY=VALUE", file="--set", hint="e.g. --set machine.accelerator_count=2"
        )
    segments = key.strip().split(".")
    shown = _cut(key.strip())
    if "" in segments:
        raise ConfigError(
            f"the key {shown!r} has an empty part (`..`, or a dot at an end)",
            file="--set",
            hint="write the key's parts joined by single dots, e.g. --set machine.type=n1-standard-8",
        )
    if len(segments) > MAX_SET_PARTS:
        raise ConfigError(
            f"the key {shown!r} has {len(segments):,} parts; cloudtrain's keys have at most {MAX_SET_PARTS}",
            file="--set",
            hint="see `cloudtrain schema` for the keys",
        )
    parts: list[str | int] = [int(p) if p.isdigit() else p for p in segments]
    text = raw.strip()
    # a YAML flow list or mapping (--set 'labels={team: ml}') or a quoted scalar (--set 'name="x"'): read as YAML
    parsed = text.startswith(("[", "{")) or len(text) > 1 and text[0] == text[-1] and text[0] in "'\""
    value = load_yaml(text, "--set").data if parsed else resolve_scalar(text)
    if not parsed and not isinstance(value, (str, bool)) and value is not None and _text_field(tuple(parts)):
        value = text  # a flag is typed, not YAML: --set image.tensorflow=2.18 means "2.18"
    elif not parsed and isinstance(value, (int, float)) and not isinstance(value, bool):
        loaded.numbers[tuple(parts)] = text  # as a number of the file: hyperparameters keep this text
    target = loaded.data
    for i, part in enumerate(parts[:-1]):
        nxt = (
            (target[part] if isinstance(target, dict) else target[int(part)])
            if isinstance(target, (dict, list)) and _has(target, part)
            else None
        )
        if nxt is None:
            nxt = {}
            target[part] = nxt
            loaded.lines.setdefault(tuple(parts[: i + 1]), 0)  # made by --set: an unknown key is named there
        elif not isinstance(nxt, (dict, list)):
            raise ConfigError(f"cannot set inside {dotted(tuple(parts[: i + 1]))}: it is a value", file="--set")
        target = nxt
    target[parts[-1]] = value
    loaded.lines[tuple(parts)] = 0  # marks "from --set"; see line_of


def _text_field(path: Path_) -> bool:
    """Whether the schema takes only text at ``path`` (image.tensorflow, name, region, …)."""
    kinds: set[Any] = {registered_config()}
    for part in path:
        model = next((k for k in kinds if isinstance(k, type) and issubclass(k, Record)), None)
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return False
        kinds = _kinds(model.model_fields[part].annotation)
    return str in kinds and not kinds & {int, float, bool, list, dict}


def _kinds(annotation: Any) -> set[Any]:
    """The plain types an annotation allows: ``Annotated[StrictStr | None, …]`` → {str, NoneType}."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _kinds(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_kinds(a) for a in typing.get_args(annotation)))
    if origin is not None:
        return {origin}
    return {annotation}


def _has(container: dict[str, Any] | list[Any], key: str | int) -> bool:
    return key in container if isinstance(container, dict) else isinstance(key, int) and key < len(container)


def _translate_all(errors: list[dict[str, Any]], loaded: LoadedYaml) -> list[tuple[Path_, ConfigError]]:
    """Each refused value as one line, with the data path to leave out when the data is read again."""

    remaining = list(errors)
    for alias in [e for e in errors if e["type"] == "extra_forbidden" and _alias_of(e["loc"])]:
        meant = tuple(str(_alias_of(alias["loc"])).split("."))
        remaining = [
            e for e in remaining if not (e["type"] == "missing" and meant[: len(_data_path(e))] == _data_path(e))
        ]
    out = []
    while remaining:
        head = _data_path(remaining[0])
        group = [
            e for e in remaining if _data_path(e)[: len(head)] == head or head[: len(_data_path(e))] == _data_path(e)
        ]
        remaining = [e for e in remaining if e not in group]
        out.append((head, _translate(group, loaded)))
    return out


def _translate(errors: list[dict[str, Any]], loaded: LoadedYaml) -> ConfigError:
    """Turn pydantic's first error into one line: file:line: field: received …; allowed … — fix."""
    aliased = next((e for e in errors if e["type"] == "extra_forbidden" and _alias_of(e["loc"])), None)
    if aliased is not None:  # an unknown key people often write for a known one explains the "missing" it causes
        path, error = _data_path(aliased), aliased
    else:
        paths = [_data_path(e) for e in errors]
        # Alternatives of one union value (``data.NAME``: a string or a mapping): the one that got furthest in.
        path, error = max(
            ((p, e) for p, e in zip(paths, errors, strict=True) if p[: len(paths[0])] == paths[0]),
            key=lambda pe: (len(pe[0]), pe[1]["type"] == "extra_forbidden"),
        )
    kind, received = error["type"], error.get("input")
    at = partial(loaded.error, path)

    if kind == "extra_forbidden":
        return at(f"unknown key {path[-1]!r}", _unknown_key_hint(path, loaded))
    if kind == "missing":
        return at("required key is missing", f"add {path[-1]}: … (see `cloudtrain schema`)")
    if kind == "bool_type" and isinstance(received, str) and received in YAML11_BOOLEAN_WORDS:
        return at(
            f"received {received!r}, which YAML 1.1 tools read as a boolean but cloudtrain does not",
            "write true or false",
        )
    if kind == "literal_error":
        return at(f"received {_shown_value(path, received)}; allowed: {error['ctx']['expected']}")
    if kind == "list_type" and path == ("args",) and isinstance(received, str):
        import shlex

        items = ", ".join(f'"{a}"' for a in shlex.split(received)) if received.strip() else ""
        return at(f"received the text {received!r}; args is a list, one item per argument", f"write args: [{items}]")
    if path in loaded.numbers and path[-1] == "tensorflow":  # 2.10 is the number 2.1 in YAML
        text = loaded.numbers[path]
        return at(f"YAML reads {text} as the number {received!r}", f'quote the version: tensorflow: "{text}"')
    if kind in ("model_type", "dict_type") and path and (model := _record_at(path)):
        keys = ", ".join(list(model.model_fields)[:3])
        shown = "nothing" if received is None else f"{type(received).__name__} {received!r}"
        return at(
            f"expected a mapping of keys ({keys}, ...), received {shown}",
            f"check its indentation: the keys of {dotted(path)}: go on the lines below it, indented",
        )
    message = error["msg"].removeprefix("Value error, ")
    # A value that may be one of several plain types (hyperparameters: true, 3, 0.1 or "adam") refused by each.
    allowed = [
        e["msg"].removeprefix("Input should be a valid ")
        for e in errors
        if e["type"] in _SCALAR_KINDS and _data_path(e) == path
    ]
    if kind in _SCALAR_KINDS and len(allowed) > 1:
        message = "Input should be a valid " + ", ".join(allowed[:-1]) + " or " + allowed[-1]
    if kind == "string_type" and isinstance(received, bool):
        message += " (YAML read a boolean)"
    if kind == "string_pattern_mismatch" and path == ("name",):
        return at(
            f"received {received!r}; allowed: letters, digits, _ and -, starting with a letter, at most 128",
            "e.g. name: mnist-gpu4",
        )
    shown = (
        ""
        if isinstance(received, (dict, list)) or received is None or message.startswith("received ")
        else f"received {_shown_value(path, received)}; "
    )
    return at(
        shown + (message if message[:2].isupper() else message[0].lower() + message[1:]),  # YAML stays YAML
        _FIXES.get(kind, "").format(
            key=path[-1] if path else "",
            expected=(error.get("ctx") or {}).get("expected", ""),
            **(error.get("ctx") or {}),
        )
        or None,
    )


def _unknown_key_hint(path: Path_, loaded: LoadedYaml) -> str:
    """The fix for an unknown key: its known name, the nearest key, the block it lost, else the allowed keys."""
    around = _record_at(path[:-1], keys_between=True)
    allowed = sorted(around.model_fields if around else ())
    alias = _alias_of(path)
    import difflib  # only on the error path

    guess = difflib.get_close_matches(str(path[-1]), allowed, n=1, cutoff=0.6)
    hint = (
        f"did you mean {alias}?"
        if alias
        else f"did you mean {guess[0]!r}?"
        if guess
        else f"allowed keys here: {', '.join(allowed)}"
    )
    parent = next(
        (
            k
            for k, v in registered_config().model_fields.items()
            if len(path) == 1
            and (inner := _model_in(v.annotation)) is not None
            and str(path[0]) in inner.model_fields
            and not isinstance(loaded.data.get(k), dict)
            and k in loaded.data
        ),
        None,
    )
    if parent:  # ``type:`` at the top, under an empty ``machine:``: a block that lost its indentation
        hint = f"{path[0]} belongs under {parent}: indent it"
    return hint


def _shown_value(path: Path_, value: object) -> str:
    """A refused value as an error shows it: never an ``env:`` or ``secrets:`` value, nor a secret-named
    option's (the value may be the secret itself); credentials of a known format are masked anywhere."""
    secret = bool(path) and (
        path[0] in ("env", "secrets") or (path[0] == "hyperparameters" and secret_option(str(path[-1])))
    )
    if secret:
        kind = {bool: "a boolean", int: "a number", float: "a number", str: "a text"}.get(type(value), "a value")
        return f"{kind} (not shown: it may be secret)"
    return mask_text(repr(value))


#: The fix for the error kinds (:func:`~cloudtrain.config.records.validate`'s) whose message names none.
_FIXES = {
    "int_type": "write a whole number, e.g. {key}: 2",
    "float_type": "write a number, e.g. {key}: 0.5",
    "bool_type": "write true or false",
    "string_type": 'write text; quote it where YAML reads it as something else ("…")',
    "list_type": "write a list: {key}: [a, b]",
    "dict_type": "write a mapping of keys to values under {key}:",
    "greater_than": "use a value greater than {gt}",
    "greater_than_equal": "use a value of at least {ge}",
    "less_than_equal": "use a value of at most {le}",
}


_SCALAR_KINDS = ("bool_type", "int_type", "float_type", "string_type")


#: Keys people write (from other tools or by habit) and the key cloudtrain has for them.
_ALIASES: dict[Path_, str] = {
    ("machine_type",): "machine.type",
    ("machinetype",): "machine.type",
    ("instance_type",): "machine.type",
    ("accelerator",): "machine.accelerator",
    ("accelerator_type",): "machine.accelerator",
    ("accelerator_count",): "machine.accelerator_count",
    ("tensorflow",): "image.tensorflow",
    ("image_uri",): "image.uri",
    ("module",): "package.module",
    ("python_module",): "package.module",
    ("requirements",): "package.requirements",
    ("machine", "machine_type"): "machine.type",
    ("machine", "machinetype"): "machine.type",
    ("machine", "instance_type"): "machine.type",
    ("machine", "gpu"): "machine.accelerator",
    ("machine", "gpu_count"): "machine.accelerator_count",
    ("machine", "count"): "machine.accelerator_count",
}


def _alias_of(loc: tuple[Any, ...]) -> str | None:
    return _ALIASES.get((*loc[:-1], str(loc[-1]).replace("-", "_").lower())) if loc else None


def _data_path(error: dict[str, Any]) -> Path_:
    """Where in the data an error is: its location (a mapping key's own error, at ``[key]``, names the key)."""
    loc = tuple(error["loc"])
    return loc[:-1] if loc[-1:] == ("[key]",) else loc


def _record_at(path: Path_, *, keys_between: bool = False) -> type[Record] | None:
    """The record a config path holds, if any (``("machine",)`` → Machine); with ``keys_between`` a non-field part
    (``data.NAME``) is passed over and a non-record field keeps the one around it."""
    model: type[Record] | None = registered_config()
    for part in path:
        fields = model.model_fields if model is not None else {}
        if part in fields:
            model = _model_in(fields[str(part)].annotation) or (model if keys_between else None)
        elif not keys_between:
            return None
    return model


def _model_in(annotation: Any) -> type[Record] | None:
    """The record inside ``X | None``, ``dict[str, str | X]`` and the like."""
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        if found := _model_in(arg):
            return found
    return None
