"""A user's own package under --local: only what it declares is there, and outputs land where the cloud keeps them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.packaging import build_sdist

from .conftest import make_spec


def _package(tmp_path: Path, task: str, **kwargs):
    pkg = tmp_path / "userpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text(task)
    return build_sdist(pkg, tmp_path / "dist", **kwargs)


def _run(no_tf, tmp_path, package, cloud="vertex"):
    job = no_tf().submit(make_spec(tmp_path, cloud=cloud, module="userpkg.task"), package)
    status = job.wait()
    return status, [line.message for line in job.logs()]


def test_an_undeclared_import_fails_locally_as_it_would_in_the_cloud(no_tf, tmp_path):
    # PyYAML is in cloudtrain's own environment, but the package never declared it.
    import yaml  # noqa: F401  (importable here, in the test's interpreter)

    package = _package(tmp_path, "import yaml\nprint('never here')\n")
    status, lines = _run(no_tf, tmp_path, package)
    assert status.state is JobState.FAILED and status.details["exit_code"] == 1
    assert any("ModuleNotFoundError: No module named 'yaml'" in line for line in lines)
    assert "never here" not in lines


def test_a_dependency_the_image_has_needs_no_declaration(no_tf, tmp_path):
    package = _package(
        tmp_path,
        "import setuptools, os\nos.makedirs(os.environ['AIP_MODEL_DIR'], exist_ok=True)\n"
        "open(os.path.join(os.environ['AIP_MODEL_DIR'], 'm'), 'w').close()\n",
    )
    status, lines = _run(no_tf, tmp_path, package)
    assert status.state is JobState.SUCCEEDED, lines[-20:]
    assert "warnings" not in status.details


SAVES_ELSEWHERE = """
import os
os.makedirs("export", exist_ok=True)  # relative: the replica's working folder, thrown away in the cloud
with open(os.path.join("export", "model.keras"), "w") as f:
    f.write("weights")
"""


@pytest.mark.parametrize("cloud", ["vertex", "sagemaker"])
def test_an_empty_model_dir_is_a_warning_naming_where_files_went(no_tf, tmp_path, cloud):
    status, lines = _run(no_tf, tmp_path, _package(tmp_path, SAVES_ELSEWHERE), cloud)
    assert status.state is JobState.SUCCEEDED, lines[-20:]
    [warning] = [w for w in status.details["warnings"] if "is empty" in w]
    model_dir = status.details["model_dir"]
    assert f"the model dir {model_dir} is empty at the end of the run" in warning
    replica = "chief" if cloud == "vertex" else "algo-1"
    assert str(tmp_path / "out") in warning and f"{replica}" in warning and "export (1 file)" in warning
    assert ("SM_MODEL_DIR" if cloud == "sagemaker" else "AIP_MODEL_DIR") in warning


def test_cloudtrains_own_site_packages_are_not_on_the_path(no_tf, tmp_path):
    import sysconfig

    package = _package(tmp_path, "import sys\nfor p in sys.path: print('PATH', p)\n")
    status, lines = _run(no_tf, tmp_path, package)
    assert status.state is JobState.SUCCEEDED
    paths = [line.split(" ", 1)[1] for line in lines if line.startswith("PATH ")]
    own = sysconfig.get_paths()["purelib"]
    assert paths and own not in paths and not any(p.startswith(sys.prefix + "/") for p in paths)


WRITES_INTO_THE_CONTRACT = """
import os
for name in {names!r}:
    with open(os.path.join(os.environ[name], "m.keras"), "w") as f:  # no makedirs: the cloud needs none
        f.write(name)
print("wrote into " + " ".join({names!r}))
"""


@pytest.mark.parametrize(
    "cloud, names",
    [
        ("vertex", ["AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR", "AIP_TENSORBOARD_LOG_DIR"]),
        ("sagemaker", ["SM_MODEL_DIR", "SM_OUTPUT_DATA_DIR", "SM_OUTPUT_INTERMEDIATE_DIR"]),
    ],
)
def test_code_writes_into_the_contracts_folders_without_creating_them(no_tf, tmp_path, cloud, names):
    package = _package(tmp_path, WRITES_INTO_THE_CONTRACT.format(names=names))
    status, lines = _run(no_tf, tmp_path, package, cloud)
    assert status.state is JobState.SUCCEEDED, lines[-20:]
    assert "wrote into " + " ".join(names) in lines
    assert (Path(status.details["model_dir"]) / "m.keras").read_text() == names[0]
