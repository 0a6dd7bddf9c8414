"""``fallback:`` entries → whole candidate configs, each validated offline like the main one (the entry's keys laid
over the main config); an error points at the entry's line when the entry set the key."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

from cloudtrain import catalog
from cloudtrain.backend_rules import rules
from cloudtrain.catalog import crosscloud
from cloudtrain.config import crosscloud as fit
from cloudtrain.config.yaml12 import LoadedYaml, Path_
from cloudtrain.errors import ConfigError, ConfigErrors
from cloudtrain.text import mapped_line

#: Main-config keys a candidate never inherits: its own list of fallbacks.
_NOT_INHERITED = ("fallback",)


def expand(loaded: Any, load_candidate: Callable[..., Any], *, strict: bool = False) -> tuple[Any, ...]:
    """Every fallback entry of ``loaded`` as a LoadedConfig of its own, in order, validated by ``load_candidate``; one
    on another backend is translated and keeps the main runtime (:func:`same_runtime`)."""
    source: LoadedYaml = loaded.source
    entries = source.data.get("fallback") or []
    out = []
    for index, entry in enumerate(entries):
        doc = candidate_document(source, index, entry)
        other_backend = doc.data.get("backend") != loaded.config.backend
        notes = same_runtime(loaded, doc, entry) if other_backend else []
        if strict and notes:  # as the loader does for the candidate's other mappings
            raise strict_refusal(notes, f"fallback[{index}]")
        try:
            candidate = load_candidate(doc, translate=other_backend)
        except ConfigError as exc:  # name the candidate: the main config's key may be fine on its own
            errors = [_in_candidate(e, index) for e in getattr(exc, "errors", None) or (exc,)]
            raise errors[0] if len(errors) == 1 else ConfigErrors(errors) from None
        out.append(dataclasses.replace(candidate, notes=(*notes, *candidate.notes)))
    return tuple(out)


def strict_refusal(notes: list[str], field: str | None = None) -> ConfigError:
    """``--strict-legacy``'s refusal of a config that needed mapping: its first ``mapped:`` line and how many more."""
    more = f"; and {len(notes) - 1} more" if len(notes) > 1 else ""
    hint = "fix the config, or drop --strict-legacy to accept the mapping"
    return ConfigError(f"{notes[0]}{more}", file="--strict-legacy", field=field, hint=hint)


def _in_candidate(exc: ConfigError, index: int) -> ConfigError:
    field = f"fallback[{index}]" + (f" → {exc.field}" if exc.field else "")
    return ConfigError(exc.detail, file=exc.file, line=exc.line, field=field, hint=exc.hint)


def same_runtime(main: Any, doc: LoadedYaml, entry: dict[str, Any]) -> list[str]:
    """Give a candidate on another backend the main request's TensorFlow and Python, else the nearest newer (or newest),
    one ``mapped:`` line each, not its cloud's default image; the entry's own win."""
    cfg = main.config
    cloud = doc.data.get("backend")
    written = entry.get("image")
    given: dict[str, Any] = written if isinstance(written, dict) else {}
    if cfg.image.uri or cfg.container is not None or "uri" in given or cloud not in catalog.clouds():
        return []
    tensorflow = cfg.image.tensorflow or catalog.default_tensorflow(cfg.cloud)
    tensorflow = ".".join(tensorflow.strip().split(".")[:2])
    python = cfg.image.python or (catalog.image_pythons(cfg.cloud, tensorflow) or (None,))[-1]
    image = doc.data.setdefault("image", {}) if isinstance(doc.data.get("image", {}), dict) else None
    if image is None:
        return []
    notes = []
    if "tensorflow" not in given:
        chosen, why = crosscloud.mapped_tensorflow(
            tensorflow, catalog.tensorflow_versions(cloud), rules(cloud).words.title
        )
        image["tensorflow"] = chosen
        if why:
            notes.append(mapped_line("image.tensorflow", tensorflow, chosen, f"{why}; the main request runs it"))
    if "python" not in given and python:
        kept, note = fit.python_on(cloud, image["tensorflow"], python)
        image.update(python=kept) if kept else image.pop("python", None)
        notes += [note] if note else []
    return notes


def candidate_document(source: LoadedYaml, index: int, entry: dict[str, Any]) -> LoadedYaml:
    data = {k: copy.deepcopy(v) for k, v in source.data.items() if k not in _NOT_INHERITED}
    if entry.get("backend") and entry["backend"] != data.get("backend"):
        data.pop("target", None)
        for key in ("project", "role_arn", "staging_bucket", "output_dir", "service_account", "network"):
            if key not in entry:  # the other cloud's settings: mapped or refused by fit_to_cloud, never inherited
                data.pop(key, None)
    machine = entry.get("machine") or {}
    if machine.get("type") and "accelerator" not in machine and isinstance(data.get("machine"), dict):
        data["machine"] = {k: v for k, v in data["machine"].items() if k not in ("accelerator", "accelerator_count")}
    _lay_over(data, {k: v for k, v in entry.items() if v is not None})
    lines: dict[Path_, int] = {path: line for path, line in source.lines.items() if path[:1] != ("fallback",)}
    prefix = ("fallback", index)
    for path, line in source.lines.items():
        if path[:2] == prefix and len(path) > 2:
            lines[path[2:]] = line
    lines.setdefault((), source.lines.get(prefix, 1))
    return LoadedYaml(data, source.file, lines, dict(source.flags))


def _lay_over(base: dict[str, Any], top: dict[str, Any]) -> None:
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict) and key != "data":
            _lay_over(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
