"""YAML file (+ ``--set`` overrides) → validated :class:`JobConfig`, or one actionable error."""

from __future__ import annotations

import difflib
from functools import partial
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, ValidationError

from cloudtrain.config import legacy
from cloudtrain.config.schema import JobConfig
from cloudtrain.config.yaml12 import YAML11_BOOLEAN_WORDS, LoadedYaml, Path_, dotted, load_yaml, resolve_scalar
from cloudtrain.errors import ConfigError


@dataclass(frozen=True)
class LoadedConfig:
    config: JobConfig
    source: LoadedYaml

    @property
    def file(self) -> Path:
        return Path(self.source.file)

    @property
    def base_dir(self) -> Path:
        """Relative paths in the config (package.path) are relative to the config's folder."""
        return self.file.resolve().parent

    def error(self, path: Path_, message: str, hint: str | None = None) -> ConfigError:
        return self.source.error(path, message, hint)


def load_config(path: str | Path, overrides: Sequence[str] = (), *, local: bool = False) -> LoadedConfig:
    """Read, override, validate. ``local`` turns the job into a local run of the same target."""
    from cloudtrain.config.checks import check_config

    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            "config file not found", file=file, hint="check the path; examples are in job_configs/"
        ) from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config: {exc.__class__.__name__}", file=file) from None

    loaded = load_yaml(text, file)
    if loaded.data is None:
        raise ConfigError("the config is empty", file=file, hint="start from job_configs/gpu4.yaml")
    if not isinstance(loaded.data, dict):
        raise ConfigError("the config must be a mapping of keys to values", file=file, line=1)
    if legacy.is_legacy(loaded.data):
        loaded.data = legacy.convert(loaded)
    for override in overrides:
        apply_override(loaded, override)
    if local and loaded.data.get("backend") != "local":
        loaded.data.setdefault("target", loaded.data.get("backend"))
        loaded.data["backend"] = "local"

    try:
        config = JobConfig.model_validate(loaded.data)
    except ValidationError as exc:
        raise _translate(exc, loaded) from None
    result = LoadedConfig(config, loaded)
    check_config(result)
    return result


def apply_override(loaded: LoadedYaml, override: str) -> None:
    """``machine.accelerator_count=2`` → set that value, read with the same YAML 1.2 rules."""
    key, sep, raw = override.partition("=")
    if not sep or not key.strip():
        raise ConfigError(
            f"--set {override!r} is not KEY=VALUE", file="--set", hint="e.g. --set machine.accelerator_count=2"
        )
    parts: list[str | int] = [int(p) if p.isdigit() else p for p in key.strip().split(".")]
    flow = raw.strip().startswith(("[", "{"))  # a YAML flow list or mapping: --set 'labels={team: ml}'
    value = load_yaml(raw, "--set").data if flow else resolve_scalar(raw.strip())
    target = loaded.data
    for i, part in enumerate(parts[:-1]):
        nxt = target[part] if isinstance(target, (dict, list)) and _has(target, part) else None
        if nxt is None:
            nxt = {}
            target[part] = nxt
        elif not isinstance(nxt, (dict, list)):
            raise ConfigError(f"cannot set inside {dotted(tuple(parts[: i + 1]))}: it is a value", file="--set")
        target = nxt
    target[parts[-1]] = value
    loaded.lines[tuple(parts)] = 0  # marks "from --set"; see line_of


def _has(container: dict | list, key: str | int) -> bool:
    return key in container if isinstance(container, dict) else isinstance(key, int) and key < len(container)


def _translate(exc: ValidationError, loaded: LoadedYaml) -> ConfigError:
    """Turn pydantic's first error into one line: file:line: field: received …; allowed … — fix."""
    errors = exc.errors(include_url=False)
    paths = [_data_path(e["loc"], loaded.data, missing=e["type"] == "missing") for e in errors]
    # Alternatives of one union value (``data.NAME``: a string or a mapping): the one that got furthest in.
    path, error = max(((p, e) for p, e in zip(paths, errors) if p[: len(paths[0])] == paths[0]),
                      key=lambda pe: (len(pe[0]), pe[1]["type"] == "extra_forbidden"))  # fmt: skip
    kind, received = error["type"], error.get("input")
    at = partial(loaded.error, path)

    if kind == "extra_forbidden":
        allowed = sorted(_fields_at(path[:-1]))
        guess = difflib.get_close_matches(str(path[-1]), allowed, n=1, cutoff=0.6)
        hint = f"did you mean {guess[0]!r}?" if guess else f"allowed keys here: {', '.join(allowed)}"
        return at(f"unknown key {path[-1]!r}", hint)
    if kind == "missing":
        return at("required key is missing", f"add {path[-1]}: … (see `cloudtrain schema`)")
    if kind == "bool_type" and received in YAML11_BOOLEAN_WORDS:
        return at(f"received {received!r}, which YAML 1.1 tools read as a boolean but cloudtrain does not",
                  "write true or false")  # fmt: skip
    if kind == "literal_error":
        return at(f"received {received!r}; allowed: {error['ctx']['expected']}")
    message = error["msg"].removeprefix("Value error, ")
    if kind == "string_type" and received in (True, False):
        message += " (YAML read a boolean)"
    if kind == "string_pattern_mismatch" and path == ("name",):
        return at(f"received {received!r}; allowed: lowercase letters, digits and hyphens, starting with a letter, "
                  "at most 40", "e.g. name: mnist-gpu4")  # fmt: skip
    shown = "" if isinstance(received, (dict, list)) or received is None else f"received {received!r}; "
    return at(f"{shown}{message[0].lower()}{message[1:]}")


def _data_path(loc: tuple[Any, ...], data: Any, *, missing: bool) -> Path_:
    """Pydantic adds union member names (``'str'``, ``'int'``) to locations; keep what the data has."""
    path: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        if isinstance(node, dict) and part in node or isinstance(node, list) and _has(node, part):
            node = node[part]
            path.append(part)
        elif i < len(loc) - 1 and isinstance(node, dict):
            continue  # a union member's name (``DataChannel``), not a key of the data
        else:
            if missing and isinstance(node, dict):
                path.append(part)
            break
    return tuple(path)


def _fields_at(path: Path_) -> set[str]:
    model: type[BaseModel] = JobConfig
    for part in path:
        if part not in model.model_fields:  # a key of a mapping whose values are models (data.NAME)
            continue
        model = _model_in(model.model_fields[str(part)].annotation) or model
    return set(model.model_fields)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model inside ``X | None``, ``dict[str, str | X]`` and the like."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        if found := _model_in(arg):
            return found
    return None
