"""Lazy imports only for heavy optional libraries: cloudtrain's own modules are imported at the top,
so the import graph is what the top of each module says."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.architecture.import_graph import REPO
from tests.architecture.lazy_imports import (
    KEPT_LAZY,
    LazyImport,
    lazy_imports,
    not_heavy,
    own_lazy_imports,
    tree_lazy_imports,
)


def test_no_function_level_import_of_cloudtrains_own_modules() -> None:
    assert [str(i) for i in own_lazy_imports(tree_lazy_imports(REPO))] == []


def test_few_own_lazy_imports_and_few_kept_exceptions() -> None:
    """Issue 50: each backend reaches its live calls through one door; the other exceptions are few too
    (the count includes the front door and the secrets launcher's ``cloudtrain_secrets``)."""
    own = [i for i in tree_lazy_imports(REPO) if i.target.startswith("cloudtrain")]
    assert len(own) <= 11, [str(i) for i in own]
    assert len(KEPT_LAZY) <= 10


def test_every_kept_lazy_import_still_exists() -> None:
    """A kept exception that no longer happens is a stale excuse: drop it from KEPT_LAZY."""
    found = {(i.module, i.target) for i in tree_lazy_imports(REPO)}
    assert sorted(set(KEPT_LAZY) - found) == []


def test_the_checker_sees_an_offending_and_an_allowed_lazy_import(tmp_path: Path) -> None:
    """A tiny tree: one function imports an own module (absolute and relative), one imports TensorFlow,
    one imports json; the package root's ``__getattr__`` loads the API (the one allowed own lazy import)."""
    package = tmp_path / "cloudtrain"
    (package / "app").mkdir(parents=True)
    (package / "__init__.py").write_text(
        "def __getattr__(name):\n    from cloudtrain import api\n    return getattr(api, name)\n"
    )
    (package / "api.py").write_text("")
    (package / "app" / "__init__.py").write_text("")
    (package / "app" / "run.py").write_text(
        textwrap.dedent(
            """\
            import os
            from cloudtrain import spec


            def offending():
                from cloudtrain.history import find
                from . import plan
                return find, plan


            def allowed():
                import tensorflow as tf
                return tf


            def stdlib():
                def inner():
                    import json
                    return json
                return inner
            """
        )
    )

    found = tree_lazy_imports(tmp_path)

    assert found == [
        LazyImport("cloudtrain", 2, "cloudtrain.api"),
        LazyImport("cloudtrain.app.run", 6, "cloudtrain.history"),
        LazyImport("cloudtrain.app.run", 7, "cloudtrain.app"),
        LazyImport("cloudtrain.app.run", 12, "tensorflow"),
        LazyImport("cloudtrain.app.run", 18, "json"),
    ]
    assert [str(i) for i in own_lazy_imports(found)] == [
        "cloudtrain.app.run:6 imports cloudtrain.history",
        "cloudtrain.app.run:7 imports cloudtrain.app",
    ]
    assert not_heavy(found) == [LazyImport("cloudtrain.app.run", 18, "json")]


def test_a_relative_import_resolves_against_its_package() -> None:
    source = "def f():\n    from ..history import find\n    from .. import spec\n"
    assert [i.target for i in lazy_imports("cloudtrain.app.run", source)] == ["cloudtrain.history", "cloudtrain"]
    assert [i.target for i in lazy_imports("cloudtrain.app", source, is_package=True)] == [
        "cloudtrain.history",
        "cloudtrain",
    ]
