"""The import graph of cloudtrain/ and bench/, read with ``ast`` (every import, at the top or inside a
function: a lazy import is still a dependency), and the floors it must respect."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Higher floors may import lower ones, never the other way. The package root (cloudtrain/__init__.py)
#: is the front door: it loads the API lazily and stands outside the floors.
#: The longest matching prefix decides: ``cloudtrain.backends.base`` (the interface and the job-state
#: vocabulary every floor speaks) is core; the run report reads jobs through the backends, as the app does.
FLOORS = (
    # cloudtrain.testing: the contract suite a plugin's tests run, which drives the CLI as a user does
    ("entry", ("cloudtrain.cli", "cloudtrain.api", "cloudtrain.__main__", "cloudtrain.testing")),
    ("app", ("cloudtrain.app", "cloudtrain.reporting")),
    ("backends", ("cloudtrain.backends",)),
    ("core", ("cloudtrain", "cloudtrain.backends.base")),  # config, spec, packaging, data, history, sweeps, …
)


#: ``cloudtrain.backends`` itself (not its sub-packages): names and packages only, so the core (history, the
#: schema, the checks) may read it and reach a backend through ``get_backend`` at run time.
REGISTRY = "cloudtrain.backends"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(*tops: str) -> dict[str, Path]:
    return {module_name(p): p for top in tops for p in sorted((REPO / top).rglob("*.py"))}


def imports(name: str, path: Path, known: dict[str, Path]) -> dict[str, int]:
    """The modules of ``known`` that ``name`` imports, each with the line of its first import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    tree = ast.parse(path.read_text(), str(path))
    type_only = {id(n) for block in ast.walk(tree) if _is_type_checking_block(block) for n in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in type_only or not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue  # ``if TYPE_CHECKING:`` imports never run: annotations only
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
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


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def graph(*tops: str) -> dict[str, dict[str, int]]:
    known = modules(*tops)
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


def floor(name: str) -> int | None:
    """0 for the top floor; None for the package root and for modules outside cloudtrain/."""
    if name == "cloudtrain" or not name.startswith("cloudtrain"):
        return None
    if name == REGISTRY:  # the one list of backends, read by the core; it imports no backend
        return len(FLOORS) - 1
    matches = [
        (len(p), number)
        for number, (_, prefixes) in enumerate(FLOORS)
        for p in prefixes
        if name == p or name.startswith(p + ".")
    ]
    return max(matches)[1] if matches else None


def climbs(edges: dict[str, dict[str, int]]) -> list[str]:
    """Each import from a lower floor to a higher one, or from cloudtrain/ into bench/, or from the
    sweep vocabulary (cloudtrain.sweeps) into the backends it is the vocabulary of: ``a:line -> b``."""
    bad = []
    for source, targets in sorted(edges.items()):
        for target, line in sorted(targets.items()):
            at, to = floor(source), floor(target)
            up = at is not None and to is not None and to < at
            into_bench = source.startswith("cloudtrain") and target.startswith("bench")
            vocabulary = source.startswith("cloudtrain.sweeps") and floor(target) in (0, 1, 2)
            if up or into_bench or vocabulary:
                bad.append(f"{source}:{line} -> {target}")
    return bad
