"""``cloudtrain.report``, ``cloudtrain.plan``, … stay the API's functions whatever else was imported.

Importing ``cloudtrain.X`` binds the submodule as the attribute ``X`` of the package, so a subpackage
named like an API function (``cloudtrain/report/`` once was) replaced the function for the rest of the
process: ``cloudtrain.report(...)`` -> ``TypeError: 'module' object is not callable``. The run report's
package is ``cloudtrain.reporting``; these tests keep every later module from taking an API name."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import cloudtrain
from tests.conftest import REPO

_IMPORT_ALL_THEN_READ_THE_API = """
import importlib, json, pkgutil
import cloudtrain
for found in pkgutil.walk_packages(cloudtrain.__path__, "cloudtrain."):
    if found.name.rpartition(".")[2] != "__main__":  # runs the CLI when imported
        importlib.import_module(found.name)
from cloudtrain import api
seen = {}
for name in sorted(cloudtrain._API):
    value = getattr(cloudtrain, name)
    seen[name] = [value is getattr(api, name), type(value).__name__]
from cloudtrain import report
seen["from cloudtrain import report"] = [report is api.report, type(report).__name__]
print(json.dumps(seen))
"""


def test_every_api_name_is_the_apis_object_after_every_module_was_imported() -> None:
    # A process of its own: this one may have imported any subset already; there, every module is.
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL_THEN_READ_THE_API], cwd=REPO, capture_output=True, text=True, check=True
    )
    seen = json.loads(done.stdout)
    expected_types = {name: "type" if name[0].isupper() else "function" for name in cloudtrain._API}
    expected_types["from cloudtrain import report"] = "function"
    assert seen == {name: [True, kind] for name, kind in expected_types.items()}


def test_no_module_of_the_package_is_named_like_an_api_name() -> None:
    # The cause, named: a module ``cloudtrain.<api name>`` (or ``cloudtrain.<api name>.*``) would bind
    # itself over the function on import.
    top_level = {found.name for found in pkgutil.iter_modules(cloudtrain.__path__)}
    assert top_level & cloudtrain._API == set()
    assert {"reporting", "api", "app"} <= top_level  # the walk saw the package (not an empty path)
