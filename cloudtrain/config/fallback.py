"""``fallback:`` entries → whole candidate configs, each validated offline like the main one.

A candidate is the main config with the entry's keys laid over it: ``machine.type`` alone drops
the main accelerator (a SageMaker instance type implies its GPUs); a different ``backend`` makes
the candidate go through :func:`cloudtrain.config.crosscloud.fit_to_cloud`, so what the other cloud
lacks (machine, region, TensorFlow image) is mapped to its nearest with one line each — unless
the entry gives it. An error in a candidate points at the entry's own line when the entry set the
offending key, else at the main config's.
"""

from __future__ import annotations

import copy
from typing import Any

from cloudtrain.config.yaml12 import LoadedYaml, Path_
from cloudtrain.errors import ConfigError

#: Main-config keys a candidate never inherits: its own list of fallbacks.
_NOT_INHERITED = ("fallback",)


def expand(loaded: Any, load_candidate) -> tuple[Any, ...]:
    """Every fallback entry of ``loaded`` (a LoadedConfig) as a LoadedConfig of its own, in order.

    ``load_candidate(doc: LoadedYaml) -> LoadedConfig`` validates one candidate document (the same
    path the main config took after its translation)."""
    source: LoadedYaml = loaded.source
    entries = source.data.get("fallback") or []
    out = []
    for index, entry in enumerate(entries):
        doc = candidate_document(source, index, entry)
        try:
            out.append(load_candidate(doc))
        except ConfigError as exc:  # name the candidate: the main config's key may be fine on its own
            field = f"fallback[{index}]" + (f" → {exc.field}" if exc.field else "")
            raise ConfigError(exc.detail, file=exc.file, line=exc.line, field=field, hint=exc.hint) from None
    return tuple(out)


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
