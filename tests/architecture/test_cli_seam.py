"""The CLI parses and prints: the app layer and the Python API never import it (type-only imports
included), the walk of one config from ``cli/submit.py`` enters ``cli/`` once, and the ``submit``
command's body hands the job to one app use case. Read from the source with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI = "cloudtrain.cli"


def _module(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def every_import(root: Path, path: Path) -> set[str]:
    """Every module ``path`` names in an import: at the top, in a function, under ``if TYPE_CHECKING:``."""
    name = _module(root, path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.update(f"{base}.{alias.name}" for alias in node.names)
            found.add(base)
    return found


def cli_imports(root: Path, *paths: str) -> list[str]:
    """``module -> cli module`` for each import of ``cloudtrain.cli`` in the files and folders ``paths``."""
    files = [p for given in paths for p in ([root / given] if given.endswith(".py") else (root / given).rglob("*.py"))]
    return sorted(
        f"{_module(root, file)} -> {target}"
        for file in files
        for target in every_import(root, file)
        if target == CLI or target.startswith(CLI + ".")
    )


def graph(root: Path) -> dict[str, set[str]]:
    """Module → the cloudtrain modules it imports (every import, as :func:`every_import` reads them)."""
    files = {_module(root, p): p for p in sorted((root / "cloudtrain").rglob("*.py"))}
    edges: dict[str, set[str]] = {}
    for name, path in files.items():
        targets = set()
        for target in every_import(root, path):
            while target and target not in files:
                target = target.rpartition(".")[0]
            if target and target != name:
                targets.add(target)
        edges[name] = targets
    return edges


def entries_into_cli(edges: dict[str, set[str]], start: str) -> list[str]:
    """The imports that lead back into ``cli/`` from outside it, on every path of the walk from ``start``:
    none means the walk enters ``cli/`` once, where it starts."""
    seen, todo = {start}, [start]
    while todo:
        for target in edges.get(todo.pop(), set()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    in_cli = lambda module: module == CLI or module.startswith(CLI + ".")  # noqa: E731
    return sorted(
        f"{module} -> {target}"
        for module in seen
        if not in_cli(module)
        for target in edges.get(module, set())
        if in_cli(target)
    )


def app_calls_in(path: Path, function: str) -> list[str]:
    """The functions of ``cloudtrain.app`` (not its classes: options and data) that ``function`` calls."""
    tree = ast.parse(path.read_text(), str(path))
    from_app = {
        alias.asname or alias.name: f"{node.module}.{alias.name}"
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cloudtrain.app")
        for alias in node.names
    }
    body = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    return [
        from_app[call.func.id]
        for call in ast.walk(body)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in from_app
        if not call.func.id[:1].isupper()
    ]


def test_the_app_layer_and_the_api_never_import_the_cli() -> None:
    assert cli_imports(REPO, "cloudtrain/app", "cloudtrain/api.py") == []


def test_the_walk_of_a_config_from_cli_submit_enters_cli_once() -> None:
    assert entries_into_cli(graph(REPO), "cloudtrain.cli.submit") == []


def test_the_submit_command_hands_the_job_to_one_app_use_case() -> None:
    assert app_calls_in(REPO / "cloudtrain/cli/submit.py", "submit") == ["cloudtrain.app.submit.submit"]


def test_the_checks_see_a_type_only_import_of_the_cli_and_a_command_that_does_the_work(tmp_path: Path) -> None:
    """The checks themselves, on a small tree: a type-only import of the CLI in the app layer is caught,
    and so is a command body that runs the sequence itself."""
    app = tmp_path / "cloudtrain" / "app"
    app.mkdir(parents=True)
    (tmp_path / "cloudtrain" / "__init__.py").write_text("")
    (tmp_path / "cloudtrain" / "cli").mkdir()
    (tmp_path / "cloudtrain" / "cli" / "__init__.py").write_text("")
    (tmp_path / "cloudtrain" / "cli" / "submit.py").write_text(
        "from cloudtrain.app.prepare import load_spec, prepare\n"
        "from cloudtrain.app.plan import Plan\n"
        "def submit(path):\n"
        "    plan = Plan(prepare(*load_spec(path, ())))\n"
    )
    (app / "__init__.py").write_text("")
    (app / "launch.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..cli.submit import submit\n"
    )
    (app / "prepare.py").write_text("def f():\n    import cloudtrain.cli\n")
    assert cli_imports(tmp_path, "cloudtrain/app") == [
        "cloudtrain.app.launch -> cloudtrain.cli.submit",
        "cloudtrain.app.launch -> cloudtrain.cli.submit.submit",
        "cloudtrain.app.prepare -> cloudtrain.cli",
    ]
    assert entries_into_cli(graph(tmp_path), "cloudtrain.cli.submit") == ["cloudtrain.app.prepare -> cloudtrain.cli"]
    assert app_calls_in(tmp_path / "cloudtrain/cli/submit.py", "submit") == [
        "cloudtrain.app.prepare.prepare",
        "cloudtrain.app.prepare.load_spec",
    ]
