"""The package's own metadata: which ``setup.py`` / ``pyproject.toml`` describes it (``setup.py`` in the parent folder
first, as gcloud's ``--package-path``), and what it says. A literal ``setup.py`` is read statically, any other is run
(:mod:`.setup_run`); a ``dynamic`` version or dependencies in ``pyproject.toml`` is refused, never guessed."""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cloudtrain.errors import PackagingError

_FIELDS = ("name", "version", "install_requires")


@dataclass(frozen=True)
class ProjectMetadata:
    """What the user's own files say about the package (``None`` where they say nothing)."""

    source: Path | None  # the setup.py / pyproject.toml used; None = nothing found (generated)
    name: str | None
    version: str | None
    requirements: tuple[str, ...]
    how: str  # "read", "run", or "generated"
    ignored: tuple[str, ...] = ()  # one line each: another metadata file that was not used

    def describe(self, package_dir: Path) -> str:
        """One line for the dry-run summary: where the name, version and requirements came from."""
        if self.source is None:
            return "generated (no setup.py or pyproject.toml describes " + f"{Path(package_dir).name}/)"
        where = "beside" if self.source.parent != Path(package_dir) else "inside"
        how = "run with setuptools" if self.how == "run" else "read"
        return f"{self.source} ({where} the package, {how})"


def _run_setup_py(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """:func:`.setup_run.run_setup_py`, imported when a setup.py is run (it brings subprocess along)."""
    from .setup_run import run_setup_py

    return run_setup_py(*args, **kwargs)


def find_metadata(package_dir: Path, *, run: Callable[..., dict[str, Any]] = _run_setup_py) -> ProjectMetadata:
    """The metadata of the package folder ``package_dir`` (already checked to be a package)."""
    root = Path(package_dir)
    folder = root.name
    found: list[ProjectMetadata] = []
    skipped: list[str] = []
    for path in (root.parent / "setup.py", root.parent / "pyproject.toml", root / "setup.py", root / "pyproject.toml"):
        if not path.is_file():
            continue
        if path.name == "pyproject.toml":
            data = _load_toml(path)
            if not _declares(data, folder):
                if path.parent == root or not _about_a_sibling(data, root):
                    skipped.append(_not_declaring(path, data, folder))
                continue
            found.append(_from_pyproject(path, data))
        else:
            found.append(_from_setup_py(path, run))
    if not found:
        return ProjectMetadata(None, None, None, (), "generated", tuple(skipped))
    used = found[0]
    ignored = tuple(
        f"{m.source} is not used: {used.source} comes first (the order gcloud and pip read them in); "
        f"move what it declares into {used.source.name if used.source else 'that file'} and delete it"
        for m in found[1:]
    )
    return ProjectMetadata(used.source, used.name, used.version, used.requirements, used.how, (*skipped, *ignored))


def _about_a_sibling(data: dict[str, Any], root: Path) -> bool:
    """Whether a pyproject.toml beside the package describes another package folder beside it (a
    repository's own project next to its ``trainer/``): then it is not the package's, and says nothing."""
    siblings = [p.name for p in root.parent.iterdir() if p.is_dir() and p != root and (p / "__init__.py").is_file()]
    return any(_declares(data, name) for name in siblings)


def _not_declaring(path: Path, data: dict[str, Any], folder: str) -> str:
    """The warning for a pyproject.toml that was found and not used: why, what is lost, and the fix."""
    project = data.get("project") or {}
    name = project.get("name")
    why = f"its [project] name {name!r} is not {folder!r}" if isinstance(name, str) else "it has no [project] name"
    deps = project.get("dependencies")
    lost = (
        f"its dependencies ({', '.join(map(str, deps))}) will not be installed"
        if isinstance(deps, list) and deps
        else "nothing in it is used"
    )
    return (
        f"{path} is not used for {folder}/: {why} and its [tool.setuptools] lists no {folder!r}, so {lost}; "
        f'to use it, add packages = ["{folder}"] under [tool.setuptools] (or name the project {folder!r}), '
        "or list the requirements in package.requirements"
    )


def find_script_metadata(source_dir: Path, *, run: Callable[..., dict[str, Any]] = _run_setup_py) -> ProjectMetadata:
    """A script's source folder: only its own ``setup.py`` counts, where the SageMaker toolkit looks for one."""
    path = Path(source_dir) / "setup.py"
    return _from_setup_py(path, run) if path.is_file() else ProjectMetadata(None, None, None, (), "generated")


# --- setup.py ------------------------------------------------------------------------------


def _from_setup_py(path: Path, run: Callable[..., dict[str, Any]]) -> ProjectMetadata:
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
    except (OSError, UnicodeDecodeError) as e:
        raise PackagingError(f"cannot read {path}: {e}", "save it as UTF-8 text") from e
    except SyntaxError as e:
        raise PackagingError(f"{path}:{e.lineno}: not valid Python: {e.msg}", "fix the syntax error") from e
    values = _static_setup_args(tree)
    how = "read"
    if values is None:
        values, how = run(path), "run"
    requires = values.get("install_requires") or []
    if isinstance(requires, str):
        requires = requires.splitlines()
    if not isinstance(requires, (list, tuple)) or not all(isinstance(r, str) for r in requires):
        raise PackagingError(
            f"{path}: install_requires is not a list of strings", "write install_requires=['name>=1.0', …]"
        )
    version = values.get("version")
    name = values.get("name")
    return ProjectMetadata(
        path,
        str(name) if name is not None else None,
        str(version) if version is not None else None,
        tuple(requires),
        how,
    )


class _Computed(Exception):
    """A setup() argument that is not a literal or a module-level literal constant."""


def _static_setup_args(tree: ast.Module) -> dict[str, Any] | None:
    """name / version / install_requires of a literal-only ``setup.py``; ``None``: it has code, so it is run."""
    constants: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Constant, ast.Call)):
            if isinstance(node.value, ast.Constant) or _is_setup(node.value):
                continue
            return None
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            return None
        try:
            constants[node.targets[0].id] = ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_setup(n)]
    if len(calls) != 1 or any(k.arg is None for k in calls[0].keywords):  # none, several, or setup(**kwargs)
        return None
    values: dict[str, Any] = {}
    try:
        for keyword in calls[0].keywords:
            if keyword.arg in _FIELDS:
                values[keyword.arg] = _literal(keyword.value, constants)
    except _Computed:
        return None
    return values


def _is_setup(call: ast.Call) -> bool:
    return getattr(call.func, "id", None) == "setup" or getattr(call.func, "attr", None) == "setup"


def _literal(node: ast.expr, constants: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        if node.id in constants:
            return constants[node.id]
        raise _Computed(node.id)
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise _Computed(ast.dump(node)) from None


# --- pyproject.toml ------------------------------------------------------------------------


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib  # type: ignore[import-not-found]  # not in Python 3.10, the version mypy checks as
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            data: dict[str, Any] = tomllib.load(f)
            return data
    except OSError as e:
        raise PackagingError(f"cannot read {path}: {e.strerror or e}", "check its permissions") from e
    except tomllib.TOMLDecodeError as e:
        raise PackagingError(f"{path}: not valid TOML: {e}", "fix the syntax error") from e


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _declares(data: dict[str, Any], folder: str) -> bool:
    """Whether a pyproject.toml is about the package folder ``folder``."""
    project_name = (data.get("project") or {}).get("name")
    if isinstance(project_name, str) and _normal(project_name) == _normal(folder):
        return True
    setuptools = (data.get("tool") or {}).get("setuptools") or {}
    packages = setuptools.get("packages")
    if isinstance(packages, list) and folder in packages:
        return True
    find = packages.get("find") if isinstance(packages, dict) else None
    if isinstance(find, dict):
        include = find.get("include") or ["*"]
        exclude = find.get("exclude") or []
        return any(fnmatch.fnmatchcase(folder, p) for p in include) and not any(
            fnmatch.fnmatchcase(folder, p) for p in exclude
        )
    return False


def _from_pyproject(path: Path, data: dict[str, Any]) -> ProjectMetadata:
    project = data.get("project") or {}
    dynamic = set(project.get("dynamic") or [])
    for field, fix in (("version", "package.version in the config"), ("dependencies", "package.requirements")):
        if field in dynamic:
            raise PackagingError(
                f"{path}: [project] {field} is dynamic, which cloudtrain does not compute",
                f"write it in [project] or set {fix}",
            )
    requires = project.get("dependencies") or []
    if not isinstance(requires, list) or not all(isinstance(r, str) for r in requires):
        raise PackagingError(
            f"{path}: [project] dependencies is not a list of strings", "write dependencies = ['name>=1.0']"
        )
    version = project.get("version")
    return ProjectMetadata(
        path, project.get("name"), None if version is None else str(version), tuple(requires), "read"
    )
