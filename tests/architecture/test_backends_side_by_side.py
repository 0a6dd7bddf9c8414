"""Backends stand side by side: no module of one backend's folder imports another backend's folder, and no
neutral module under cloudtrain/backends/ imports any backend's folder. Every import counts, as an outsider
counts them: at the top, inside a function, and under ``if TYPE_CHECKING:``. What two backends share lives
in a neutral module both import (``cloudtrain.backends.runner``); what one backend must learn of another
(its environment contract, a store on its buckets) comes through the registry.

A backend's folder is a package under cloudtrain/backends/ with a module that sets ``BACKEND`` (what the
registry loads); any other package or module there is neutral."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _sets_backend(path: Path) -> bool:
    tree = ast.parse(path.read_text(), str(path))
    return any(
        isinstance(node, (ast.Assign, ast.AnnAssign))
        and any(
            isinstance(t, ast.Name) and t.id == "BACKEND"
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
        for node in tree.body
    )


def backend_folders(package: Path) -> set[str]:
    """The names of the folders under ``package`` (cloudtrain/backends) that are backends."""
    return {
        folder.name
        for folder in package.iterdir()
        if folder.is_dir() and (folder / "__init__.py").is_file() and any(map(_sets_backend, folder.rglob("*.py")))
    }


def _imported(path: Path, module: str) -> list[tuple[int, str]]:
    """``(line, module)`` of every import in ``path`` (module ``module``), relative ones resolved."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def crossings(package: Path) -> list[str]:
    """``file:line -> module`` for each import from one backend's folder into another's, or from a neutral
    module under ``package`` (cloudtrain/backends, the registry aside) into any backend's folder."""
    backends = backend_folders(package)
    prefix = f"{package.parent.name}.{package.name}"  # cloudtrain.backends
    bad = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        if rel == Path("__init__.py"):  # the registry: names backends' modules as text, imports none
            continue
        own = rel.parts[0] if len(rel.parts) > 1 and rel.parts[0] in backends else None
        parts = [package.parent.name, *path.relative_to(package.parent).with_suffix("").parts]
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for line, target in _imported(path, module):
            head, _, rest = target.partition(prefix + ".")
            other = rest.split(".")[0] if not head and rest else None
            if other in backends and other != own:
                bad.append(f"{path.relative_to(package.parent.parent)}:{line} -> {target}")
    return bad


def test_no_backend_imports_another_backend() -> None:
    assert crossings(REPO / "cloudtrain" / "backends") == []


def test_the_backends_are_seen_as_backends_and_the_shared_package_is_not() -> None:
    """The folders found are the registry's built-in backends' folders (read from the registry, not listed)."""
    from cloudtrain import backends

    modules = [type(backends.get_backend(name)).__module__ for name in backends.names()]
    registered = {m.split(".")[2] for m in modules if m.startswith("cloudtrain.backends.")}
    assert backend_folders(REPO / "cloudtrain" / "backends") == registered
    assert {"vertex", "sagemaker", "local", "slurm"} <= registered and "runner" not in registered


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "cloudtrain" / "backends" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root / "cloudtrain" / "backends"


def test_the_check_sees_type_only_function_level_and_relative_imports(tmp_path: Path) -> None:
    """A small tree: backend ``alpha`` imports ``beta`` only for annotations, inside a function and
    relatively; the neutral ``shared`` package imports ``beta`` too; imports of ``shared`` and of alpha's
    own modules are fine."""
    package = _write(
        tmp_path,
        {
            "__init__.py": 'MODULES = {"alpha": "cloudtrain.backends.alpha.backend"}\n',
            "base.py": "",
            "alpha/__init__.py": "",
            "alpha/backend.py": """\
                from typing import TYPE_CHECKING
                from cloudtrain.backends.alpha import helpers
                from cloudtrain.backends.shared import tools
                if TYPE_CHECKING:
                    from cloudtrain.backends.beta.job import BetaJob
                def attach():
                    from ..beta import contract
                    import cloudtrain.backends.beta.job
                BACKEND = object()
                """,
            "alpha/helpers.py": "from . import backend\n",
            "beta/__init__.py": "from cloudtrain.backends.beta.backend import BACKEND\n",
            "beta/backend.py": "BACKEND: object = object()\n",
            "beta/job.py": "from cloudtrain.backends.base import *\n",
            "beta/contract.py": "",
            "shared/__init__.py": "",
            "shared/tools.py": "def f():\n    from cloudtrain.backends.beta import contract\n",
        },
    )
    assert backend_folders(package) == {"alpha", "beta"}
    assert crossings(package) == [
        "cloudtrain/backends/alpha/backend.py:5 -> cloudtrain.backends.beta.job.BetaJob",
        "cloudtrain/backends/alpha/backend.py:7 -> cloudtrain.backends.beta.contract",
        "cloudtrain/backends/alpha/backend.py:8 -> cloudtrain.backends.beta.job",
        "cloudtrain/backends/shared/tools.py:2 -> cloudtrain.backends.beta.contract",
    ]
