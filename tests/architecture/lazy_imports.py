"""Function-level (lazy) imports in cloudtrain/, read with ``ast``, and which of them the house allows.

A lazy import hides a dependency from whoever reads the top of the module, and from the import-graph
checks' readers. It is kept only for libraries that are heavy to import and optional to install (the
cloud SDKs, TensorFlow, matplotlib, Optuna, …), so ``cloudtrain --help`` and ``--dry-run`` never pay
for them. cloudtrain's own modules are imported at the top.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

#: The third-party top-level names a function may import: heavy libraries a user may not have installed
#: (an extra) or should not pay for on every command.
HEAVY_OPTIONAL = frozenset(
    {
        "boto3",  # cloudtrain[sagemaker]
        "botocore",
        "sagemaker",
        "google",  # cloudtrain[vertex]: google.cloud.aiplatform, storage, logging, google.auth, google.api_core
        "grpc",
        "tensorflow",  # cloudtrain[local] and the clouds' images
        "keras",
        "optuna",  # local sweeps
        "matplotlib",  # cloudtrain[report]
        "playwright",
        "cloudtrain_secrets",  # exists only inside a job's package on the cloud machine
    }
)

#: The one deliberate lazy import of cloudtrain's own code: the package root's PEP 562 ``__getattr__``
#: loads the API on first use, so ``import cloudtrain`` (every CLI start) stays cheap.
FRONT_DOOR = frozenset({("cloudtrain", "cloudtrain.api")})

#: Own modules kept lazy, each for its reason: Optuna at the module's top (a lazy import of Optuna by proxy),
#: or work that ``--help`` and ``--dry-run`` never do — following logs, uploading, starting subprocesses
#: (tests/test_cli.py::test_fast_paths_import_no_cloud_sdk_nor_pydantic), hashing local data.
KEPT_LAZY: dict[tuple[str, str], str] = {
    # Each backend's one door (``_live``): uploads, the API clients, the job's handle and its log follower, a
    # sweep's request and tuning job, other formats (tests/cli/test_dry_run_imports.py pins what a dry run loads).
    ("cloudtrain.backends.vertex.backend", "cloudtrain.backends.vertex.live"): "all but rendering: not on --dry-run",
    ("cloudtrain.backends.sagemaker.backend", "cloudtrain.backends.sagemaker.live"): "all but rendering: the same",
    ("cloudtrain.app.sweeps.local", "cloudtrain.sweeps.seeding"): "Optuna at its top",
    ("cloudtrain.packaging.project", "cloudtrain.packaging.setup_run"): "runs a legacy setup.py in a subprocess",
    (
        "cloudtrain.backends.kubernetes.backend",
        "cloudtrain.backends.kubernetes.live",
    ): "cluster calls: not on --dry-run",
    ("cloudtrain.cli.submit", "cloudtrain.cli._launched"): "launch, follow, sweeps: not on --dry-run",
    ("cloudtrain.app.submit", "cloudtrain.app.launch"): "launch, fallbacks, following: not on --dry-run",
    ("cloudtrain.config.checks", "cloudtrain.sweeps.params"): "a sweep's checks: not on a job's --dry-run",
    ("cloudtrain.backends.slurm.backend", "cloudtrain.backends.slurm.cluster"): "the cluster calls: not on --dry-run",
}


@dataclass(frozen=True)
class LazyImport:
    module: str  # the importing module, dotted
    line: int
    target: str  # the imported module, dotted (a relative import resolved against ``module``)

    @property
    def top(self) -> str:
        return self.target.partition(".")[0]

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.target}"


def lazy_imports(
    name: str, source: str, *, is_package: bool = False, known: frozenset[str] = frozenset()
) -> list[LazyImport]:
    """Every import inside a function (at any depth) of module ``name``; ``from a import b`` is ``a.b``
    when that is one of the ``known`` modules, else ``a``."""
    package = name if is_package else name.rpartition(".")[0]
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import):
                found += [LazyImport(name, node.lineno, alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, package)
                found += [
                    LazyImport(name, node.lineno, f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
                    for alias in node.names
                ]
    return sorted(set(found), key=lambda i: (i.module, i.line, i.target))  # nested functions are walked twice


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def tree_lazy_imports(root: Path, top: str = "cloudtrain") -> list[LazyImport]:
    """:func:`lazy_imports` over every module of the package ``root / top``."""
    paths = {}
    for path in sorted((root / top).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    known = frozenset(paths)
    found = []
    for name, path in paths.items():
        found += lazy_imports(name, path.read_text(), is_package=path.name == "__init__.py", known=known)
    return found


def own_lazy_imports(found: list[LazyImport], own: str = "cloudtrain") -> list[LazyImport]:
    """The lazy imports of the package's own modules (the front door's excepted): each one a finding."""
    return [i for i in found if i.top == own and (i.module, i.target) not in FRONT_DOOR | KEPT_LAZY.keys()]


def not_heavy(found: list[LazyImport], own: str = "cloudtrain") -> list[LazyImport]:
    """The lazy imports of anything else that is not on :data:`HEAVY_OPTIONAL` (the standard library, the
    core's own dependencies): they belong at the top too."""
    return [i for i in found if i.top != own and i.top not in HEAVY_OPTIONAL]
