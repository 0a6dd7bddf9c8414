"""The import graph of cloudtrain/ and bench/, read with ``ast`` as an outsider reads it: every import, at
the top, inside a function or under ``if TYPE_CHECKING:`` (a type-only import is still an arrow), and each
module on the floor its folder gives it."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Higher floors may import lower ones, never the other way; each module stands on its folder's floor (the
#: longest matching folder decides). The package root (cloudtrain/__init__.py) is the front door: it loads
#: the API lazily and stands outside the floors. ``cloudtrain.api`` and ``cloudtrain.__main__`` are the two
#: faces the CLI and programs enter by, drawn on their own in the architecture diagram as here.
FLOORS = (
    # cloudtrain.testing: the contract suite a plugin's tests run, which drives the CLI as a user does
    ("entry", ("cloudtrain.cli", "cloudtrain.api", "cloudtrain.__main__", "cloudtrain.testing")),
    ("app", ("cloudtrain.app",)),
    ("reporting", ("cloudtrain.reporting",)),  # what the app's report use case draws
    ("backends", ("cloudtrain.backends",)),  # the runtime Backend (backends/base.py), its registry face, each backend
    ("core", ("cloudtrain",)),  # config/, spec.py, packaging/, data/, history.py, backend_rules/, …
)

#: The folders below ``config/``: what they import (at any depth) never reaches ``config/`` or ``spec.py``.
#: ``backend_rules`` is the registry and what the config needs of a backend; the others are what the
#: config's checks call.
BELOW_CONFIG = (
    "cloudtrain.backend_rules",
    "cloudtrain.catalog",
    "cloudtrain.data",
    "cloudtrain.packaging",
    "cloudtrain.secrets",
    "cloudtrain.sweeps",
)
CONFIG = ("cloudtrain.config", "cloudtrain.spec")


def module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(*tops: str, root: Path = REPO) -> dict[str, Path]:
    return {module_name(p, root): p for top in tops for p in sorted((root / top).rglob("*.py"))}


def imports(name: str, path: Path, known: dict[str, Path]) -> dict[str, int]:
    """The modules of ``known`` that ``name`` imports, each with the line of its first import: every import
    statement, type-only ones included."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.setdefault(target, node.lineno)
    return found


def graph(*tops: str, root: Path = REPO) -> dict[str, dict[str, int]]:
    known = modules(*tops, root=root)
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in edges:
        if v not in index:
            visit(v)
    return found


def _within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


#: A backend's CLI commands (``cloudtrain/backends/<name>/commands.py``, which the registry lists) stand on
#: the entry floor beside ``cli/``: they parse a format the backend owns and print through the CLI's views.
BACKEND_COMMANDS = "commands"


def floor(name: str) -> int | None:
    """0 for the top floor; None for the package root and for modules outside cloudtrain/."""
    if name == "cloudtrain" or not name.startswith("cloudtrain"):
        return None
    parts = name.split(".")
    if len(parts) == 4 and parts[1] == "backends" and parts[3] == BACKEND_COMMANDS:
        return 0
    matches = [(len(p), number) for number, (_, prefixes) in enumerate(FLOORS) for p in prefixes if _within(name, [p])]
    return max(matches)[1] if matches else None


def climbs(edges: dict[str, dict[str, int]]) -> list[str]:
    """Each import from a lower floor to a higher one, or from cloudtrain/ into bench/: ``a:line -> b``."""
    bad = []
    for source, targets in sorted(edges.items()):
        for target, line in sorted(targets.items()):
            at, to = floor(source), floor(target)
            up = at is not None and to is not None and to < at
            into_bench = source.startswith("cloudtrain") and target.startswith("bench")
            if up or into_bench:
                bad.append(f"{source}:{line} -> {target}")
    return bad


def reaches_config(edges: dict[str, dict[str, int]]) -> list[str]:
    """Each path by which a module of a folder below ``config/`` reaches ``config/`` or ``spec.py``, directly
    or through others: ``a:line -> b:line -> cloudtrain.config.x`` (the shortest path of each module)."""
    bad = []
    for start in sorted(n for n in edges if _within(n, BELOW_CONFIG)):
        seen = {start}
        paths: list[list[str]] = [[start]]
        while paths:
            path = paths.pop(0)
            for target, line in sorted(edges.get(path[-1], {}).items()):
                if target in seen:
                    continue
                seen.add(target)
                step = [*path[:-1], f"{path[-1]}:{line}", target]
                if _within(target, CONFIG):
                    bad.append(" -> ".join(step))
                    paths = []
                    break
                paths.append(step)
    return bad
