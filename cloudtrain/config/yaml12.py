"""Read YAML with YAML 1.2 scalar rules (PyYAML is 1.1: ``off`` is a boolean, ``010`` octal) and remember every key's
line. Hostile input is refused before any node is built (:func:`_check_shape`): nesting deeper than :data:`MAX_DEPTH`,
self-referencing aliases, more than :data:`MAX_VALUES` values counting alias expansion; each refusal names the line."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from cloudtrain.errors import ConfigError

Path_ = tuple[str | int, ...]

_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"^[-+]?[0-9]+$")
_OCT = re.compile(r"^0o[0-7]+$")
_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_SPECIAL_FLOAT = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}
#: Words YAML 1.1 (PyYAML, many other tools) would have read as booleans.
YAML11_BOOLEAN_WORDS = frozenset(
    w for base in ("y", "yes", "n", "no", "on", "off") for w in (base, base.capitalize(), base.upper())
)
#: Deepest nesting of lists and mappings a config may have (real ones stay under 10).
MAX_DEPTH = 100
#: Most values (scalars, lists, mappings; aliases expanded) one document may hold; real configs hold < 1,000.
MAX_VALUES = 10_000


@dataclass
class LoadedYaml:
    """A parsed document plus where each value came from (1-based lines)."""

    data: Any
    file: str
    lines: dict[Path_, int] = field(default_factory=dict)
    #: Values that came from a command-line flag (the gcloud forms): path → ``"--region"``.
    flags: dict[Path_, str] = field(default_factory=dict)
    numbers: dict[Path_, str] = field(default_factory=dict)  # the text of unquoted numbers: 2.10 stays "2.10" here
    _texts: set[tuple[int, int]] = field(default_factory=set, repr=False)  # where scalars tagged !!str start

    def line_of(self, path: Path_) -> int | None:
        """Line of ``path`` or of its nearest ancestor that has one; 0 means "set by --set"."""
        return next((self.lines[path[:cut]] for cut in range(len(path), -1, -1) if path[:cut] in self.lines), None)

    def error(self, path: Path_, message: str, hint: str | None = None) -> ConfigError:
        """An error pointing at ``path``: ``file:line: field`` or ``--set: field``."""
        line = self.line_of(path)
        flag = self.flag_of(path)
        file, line = ("--set", None) if line == 0 else (flag, None) if flag else (self.file, line)
        return ConfigError(message, file=file, line=line, field=dotted(path), hint=hint)

    def flag_of(self, path: Path_) -> str | None:
        """The flag that set ``path`` or its nearest ancestor, if a flag did."""
        found = next((self.flags[path[:cut]] for cut in range(len(path), -1, -1) if path[:cut] in self.flags), None)
        if found is not None:
            return found
        below = {flag for key, flag in self.flags.items() if key[: len(path)] == path}
        return below.pop() if len(below) == 1 else None  # one flag set everything under it

    def origin(self, path: Path_) -> str:
        """Where a value came from, for the summary: ``--project``, ``--set`` or ``file:line``."""
        line = self.line_of(path)
        if line == 0:
            return "--set"
        return self.flag_of(path) or (f"{self.file}:{line}" if line else self.file)


def resolve_scalar(text: str) -> Any:
    """Resolve a plain (unquoted) scalar with the YAML 1.2 core schema."""
    if _NULL.match(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT.match(text):
        return int(text, 10)
    if _OCT.match(text):
        return int(text[2:], 8)
    if _HEX.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    if text.lower() in _SPECIAL_FLOAT:
        return _SPECIAL_FLOAT[text.lower()]
    return text


def load_yaml(text: str, file: str) -> LoadedYaml:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        texts = _check_shape(text, file, loader)
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(
            f"YAML syntax error: {problem}",
            file=file,
            line=mark.line + 1 if mark else None,
            hint="check indentation and quoting around that line",
        ) from None
    loaded = LoadedYaml(data=None, file=file)
    loaded._texts = texts
    if root is not None:
        loaded.data = _build(root, (), loaded)
    return loaded


STR_TAG = "tag:yaml.org,2002:str"


def _check_shape(text: str, file: str, loader: Any) -> set[tuple[int, int]]:
    """Refuse deep nesting, recursive aliases and alias bombs from the event stream, before composing (an alias counts
    its anchor's subtree); where the ``!!str``-tagged scalars start."""
    texts: set[tuple[int, int]] = set()
    expanded = 0
    open_anchors: list[tuple[str | None, int]] = []  # the collections being read: (anchor, expanded at start)
    sizes: dict[str, int] = {}

    def refuse(event: Any, message: str, hint: str) -> ConfigError:
        return ConfigError(message, file=file, line=event.start_mark.line + 1, hint=hint)

    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent):
            if any(anchor == event.anchor for anchor, _ in open_anchors):
                raise refuse(
                    event,
                    f"the alias *{event.anchor} refers to the collection it is part of (a loop)",
                    "write the value out",
                )
            expanded += sizes.get(event.anchor or "", 1)
            if expanded > MAX_VALUES:
                raise refuse(
                    event,
                    f"YAML aliases expand the config past {MAX_VALUES:,} values",
                    "write the values out, or reuse fewer of them",
                )
            continue
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(open_anchors) >= MAX_DEPTH:
                raise refuse(event, f"nested deeper than {MAX_DEPTH} levels", "flatten the structure")
            open_anchors.append((event.anchor, expanded))
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            anchor, start = open_anchors.pop()
            if anchor is not None:
                sizes[anchor] = expanded - start
            continue
        elif not isinstance(event, yaml.ScalarEvent):
            continue
        if event.tag == STR_TAG and event.start_mark is not None:
            texts.add((event.start_mark.line, event.start_mark.column))
        if event.anchor is not None:
            sizes[event.anchor] = 1
        expanded += 1
        if expanded > MAX_VALUES:
            raise refuse(
                event,
                f"the config holds more than {MAX_VALUES:,} values",
                "a job config holds a few hundred; pass long lists in a file the job reads",
            )
    return texts


def _build(node: yaml.Node, path: Path_, out: LoadedYaml) -> Any:
    out.lines.setdefault(path, node.start_mark.line + 1)
    if node.tag.startswith("!"):  # a local tag: nothing expands it, and it would silently become text
        _refuse_tag(node, path, out)
    if isinstance(node, yaml.ScalarNode):
        # Plain scalars (style None, or "" from the C loader) get YAML 1.2 resolution; quoted ones stay text.
        if node.style or (node.start_mark.line, node.start_mark.column) in out._texts:
            return node.value  # quoted, or tagged !!str: text as written
        value = resolve_scalar(node.value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out.numbers[path] = node.value
        return value
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, (*path, i), out) for i, item in enumerate(node.value)]
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise ConfigError(
                    "YAML merge keys (<<) are not supported",
                    file=out.file,
                    line=key_node.start_mark.line + 1,
                    hint="write the keys out",
                )
            key = _build(key_node, (*path, "<key>"), out)
            key = key if isinstance(key, str) else str(key).lower() if isinstance(key, bool) else str(key)
            if key in result:
                raise ConfigError(
                    f"duplicate key {key!r} (first at line {out.lines[path + (key,)]})",
                    file=out.file,
                    line=key_node.start_mark.line + 1,
                    field=dotted(path + (key,)),
                    hint="keep one of them",
                )
            out.lines[path + (key,)] = key_node.start_mark.line + 1
            result[key] = _build(value_node, path + (key,), out)
        out.lines.pop((*path, "<key>"), None)
        return result
    raise ConfigError(f"unsupported YAML node {node.tag}", file=out.file, line=node.start_mark.line + 1)


def _refuse_tag(node: yaml.Node, path: Path_, out: LoadedYaml) -> None:
    """``API_KEY: !env MY_KEY`` would be the string ``MY_KEY``: refused, pointing at ``secrets:``."""
    value = node.value if isinstance(node, yaml.ScalarNode) else "…"
    name = path[-1] if path and isinstance(path[-1], str) else "NAME"
    raise ConfigError(
        f"YAML tag {node.tag} is not supported: {node.tag} {value} would be read as the text {value!r}",
        file=out.file,
        line=node.start_mark.line + 1,
        field=dotted(path) or None,
        hint=f"to pass a variable of your shell, move it to secrets: ({name}: shell:{value}); "
        "see docs/how-to/secrets.md for secrets stored in the cloud",
    )


def dotted(path: Path_) -> str:
    """``("machine", "type")`` → ``machine.type``; ``("args", 0)`` → ``args[0]``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
