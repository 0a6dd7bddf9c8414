"""Imports point one way, as an outsider counts them (every import, ``if TYPE_CHECKING:`` ones included,
each module on its folder's floor): no circle anywhere in cloudtrain/ or bench/, no module imports one on
a higher floor (entry points → app layer → reporting → backends → core), and nothing below ``config/`` (the
registry and the backends' config-time rules in backend_rules/, the catalog, data, packaging, secrets,
sweeps) reaches ``config/`` or ``spec.py``. Read from the source with ``ast``."""

from __future__ import annotations

from pathlib import Path

from tests.architecture.import_graph import BACKEND_COMMANDS, climbs, cycles, graph, reaches_config


def test_no_import_cycles_in_cloudtrain_or_bench() -> None:
    assert cycles(graph("cloudtrain", "bench")) == []


def test_no_module_imports_a_higher_floor() -> None:
    assert climbs(graph("cloudtrain", "bench")) == []


def test_nothing_below_the_config_reaches_the_config_or_the_spec() -> None:
    assert reaches_config(graph("cloudtrain")) == []


def test_the_checks_see_a_cycle_and_a_climb() -> None:
    """The checks themselves: a made-up graph with a circle and an upward import is caught."""
    edges = {
        "cloudtrain.spec": {"cloudtrain.app.launch": 3},
        "cloudtrain.app.launch": {"cloudtrain.spec": 1},
        "cloudtrain.sweeps.params": {"cloudtrain.backends.vertex": 7},
        "cloudtrain.reporting.collect": {"cloudtrain.app.sweeps.lookup": 10},
    }
    assert cycles(edges) == [["cloudtrain.app.launch", "cloudtrain.spec"]]
    assert climbs(edges) == [
        "cloudtrain.reporting.collect:10 -> cloudtrain.app.sweeps.lookup",
        "cloudtrain.spec:3 -> cloudtrain.app.launch",
        "cloudtrain.sweeps.params:7 -> cloudtrain.backends.vertex",
    ]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_type_only_import_in_a_tree_is_an_arrow_that_circles_and_climbs(tmp_path: Path) -> None:
    """A small tree as the repository was before backend_rules/: the config reads the registry, whose
    ``if TYPE_CHECKING:`` import of the Backend leads up to backends/base.py, then spec.py, then the config."""
    _write(
        tmp_path,
        {
            "cloudtrain/__init__.py": "",
            "cloudtrain/config/__init__.py": "",
            "cloudtrain/config/load.py": "from cloudtrain.registry import get_backend\n",
            "cloudtrain/registry.py": (
                "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                "    from cloudtrain.backends.base import Backend\n"
            ),
            "cloudtrain/backends/__init__.py": "",
            "cloudtrain/backends/base.py": "from cloudtrain.spec import JobSpec\n",
            "cloudtrain/spec.py": "import cloudtrain.config.load\n",
            "cloudtrain/sweeps/__init__.py": (
                "from __future__ import annotations\nimport typing\n\nif typing.TYPE_CHECKING:\n"
                "    from cloudtrain.spec import JobSpec\n"
            ),
        },
    )
    edges = graph("cloudtrain", root=tmp_path)
    assert edges["cloudtrain.registry"] == {"cloudtrain.backends.base": 4}
    assert cycles(edges) == [
        ["cloudtrain.backends.base", "cloudtrain.config.load", "cloudtrain.registry", "cloudtrain.spec"]
    ]
    assert climbs(edges) == ["cloudtrain.registry:4 -> cloudtrain.backends.base"]
    assert reaches_config(edges) == ["cloudtrain.sweeps:5 -> cloudtrain.spec"]


def _folder(name: str) -> str | None:
    """The folder (or root module) a module is counted in; a backend's commands count with the CLI's."""
    parts = name.split(".")
    if name == "cloudtrain":  # the front door, which loads the API lazily: outside the folders
        return None
    if len(parts) == 4 and parts[1] == "backends" and parts[3] == BACKEND_COMMANDS:
        return "cloudtrain.cli"
    return ".".join(parts[:2])


def test_no_loop_between_folders() -> None:
    """Folders import one way too: errors.py reads secrets/'s masking, so secrets/ raises through no error
    of errors.py that would close a loop (resolving a secret here lives in backends/); the catalog asks
    the registry nothing (price_basis is the spec's)."""
    folders: dict[str, dict[str, int]] = {}
    for source, targets in graph("cloudtrain").items():
        for target, line in targets.items():
            a, b = _folder(source), _folder(target)
            if a and b and a != b:
                folders.setdefault(a, {})[b] = line
    assert cycles(folders) == []


#: What still names a backend's folder from outside backends/: nothing may.
STILL_NAMING_A_BACKEND: set[str] = set()


def test_only_the_registry_and_the_backends_name_a_backends_folder() -> None:
    """The CLI and the app reach a backend through the registry (its commands too: register(commands=...))."""
    package = Path(__file__).resolve().parents[2] / "cloudtrain" / "backends"
    shared = {"runner", "__pycache__"}  # what backends share, which anyone above them may use
    folders = {p.name for p in package.iterdir() if p.is_dir() and p.name not in shared}
    named = {
        f"{source} -> {target}"
        for source, targets in graph("cloudtrain").items()
        if not source.startswith(("cloudtrain.backends", "cloudtrain.backend_rules"))
        for target in targets
        if target.split(".")[1:2] == ["backends"] and target.split(".")[2:3] and target.split(".")[2] in folders
    }
    assert named == STILL_NAMING_A_BACKEND
