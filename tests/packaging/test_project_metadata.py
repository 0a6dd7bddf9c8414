"""The package's own setup.py / pyproject.toml give the sdist its name, version and requirements."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from cloudtrain.errors import PackagingError
from cloudtrain.packaging import build_sdist
from cloudtrain.packaging.project import find_metadata
from tests.conftest import REPO
from tests.packaging.conftest import FIXTURES
from tests.packaging.sdist_helpers import member_bytes


def copy(name: str, tmp_path: Path) -> Path:
    """A fresh copy of tests/packages/<name>; returns its trainer/ folder."""
    dst = tmp_path / name
    shutil.copytree(FIXTURES / name, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst / "trainer"


def pkg_info(built) -> str:
    with tarfile.open(built.path) as tar:
        return member_bytes(tar, f"{built.name}-{built.version}/PKG-INFO").decode()


def test_setup_py_beside_the_package_gives_name_version_and_requirements(tmp_path):
    built = build_sdist(copy("tutorial_mgpu", tmp_path), tmp_path / "dist")
    assert (built.name, built.version) == ("mgpu", "0.2")
    assert built.filename.startswith("mgpu-0.2-")
    assert built.requirements == ("scikit-learn>=1.3",)
    assert "Requires-Dist: scikit-learn>=1.3" in pkg_info(built)
    assert "mgpu-0.2/trainer/task.py" in built.files
    assert "setup.py" in built.metadata and "beside the package, read" in built.metadata


def test_the_first_articles_setup_py_with_a_constant_list(tmp_path):
    pkg = copy("tutorial_mgpu", tmp_path)
    (pkg.parent / "setup.py").write_text(
        "from setuptools import find_packages, setup\n"
        "REQUIRED_PACKAGES = ['h5py==2.7.0']\n"
        "setup(name='mgpu', version='0.2', install_requires=REQUIRED_PACKAGES, packages=find_packages())\n"
    )
    built = build_sdist(pkg, tmp_path / "dist")
    assert built.requirements == ("h5py==2.7.0",)
    assert find_metadata(pkg).how == "read"  # static: nothing was run


def test_setup_py_inside_the_package_folder(tmp_path):
    built = build_sdist(copy("setup_inside", tmp_path), tmp_path / "dist")
    assert (built.name, built.version, built.requirements) == ("inside_trainer", "1.4", ("PyYAML>=5.1",))
    assert "inside the package" in built.metadata


def test_pyproject_beside_that_declares_the_package(tmp_path):
    built = build_sdist(copy("pyproject_beside", tmp_path), tmp_path / "dist")
    assert (built.name, built.version) == ("digits_trainer", "2.0.1")
    assert built.requirements == ("PyYAML>=5.1", "requests")


def test_a_repositorys_own_pyproject_is_never_taken_for_the_trainers(tmp_path):
    meta = find_metadata(REPO / "trainer")
    assert meta.source is None and meta.how == "generated"
    built = build_sdist(REPO / "trainer", tmp_path / "dist")
    assert (built.name, built.version) == ("trainer", "0.0.0")
    assert built.metadata == "generated (no setup.py or pyproject.toml describes trainer/)"
    assert meta.ignored == () and not any("pyproject.toml" in w for w in built.warnings)  # not the trainer's: silent


def test_a_pyproject_found_and_not_used_is_one_warning_with_the_reason_and_the_fix(tmp_path):
    """A pyproject.toml beside the package whose project name differs from the folder's was skipped in
    silence: the dry run said ``metadata: generated`` and the run failed later with ModuleNotFoundError."""
    pkg = copy("pyproject_misnamed", tmp_path)
    built = build_sdist(pkg, tmp_path / "dist")
    assert built.requirements == () and built.metadata.startswith("generated")
    [warning] = [w for w in built.warnings if "pyproject.toml" in w]
    assert warning == (
        f"{pkg.parent / 'pyproject.toml'} is not used for trainer/: its [project] name 'digits-classifier' is not "
        "'trainer' and its [tool.setuptools] lists no 'trainer', so its dependencies (scikit-learn>=1.3, pandas) "
        'will not be installed; to use it, add packages = ["trainer"] under [tool.setuptools] (or name the '
        "project 'trainer'), or list the requirements in package.requirements"
    )
    # the fix it names works
    toml = pkg.parent / "pyproject.toml"
    toml.write_text(toml.read_text() + '\n[tool.setuptools]\npackages = ["trainer"]\n')
    fixed = build_sdist(pkg, tmp_path / "dist2")
    assert fixed.requirements == ("scikit-learn>=1.3", "pandas") and not fixed.warnings


def test_a_setup_py_found_after_the_one_used_is_named_with_the_fix(tmp_path):
    pkg = copy("tutorial_mgpu", tmp_path)
    (pkg / "setup.py").write_text("from setuptools import setup\nsetup(name='inner', install_requires=['h5py'])\n")
    built = build_sdist(pkg, tmp_path / "dist")
    [warning] = [w for w in built.warnings if "is not used" in w]
    assert warning.startswith(f"{pkg / 'setup.py'} is not used: {pkg.parent / 'setup.py'} comes first")
    assert warning.endswith("move what it declares into setup.py and delete it")


@pytest.mark.parametrize(
    "tool",
    ['[tool.setuptools.packages.find]\ninclude = ["trainer*"]\n', '[tool.setuptools]\npackages = ["trainer"]\n'],
)
def test_pyproject_counts_through_its_setuptools_package_list(tmp_path, tool):
    pkg = copy("pyproject_beside", tmp_path)
    (pkg.parent / "pyproject.toml").write_text(f'[project]\nname = "other"\nversion = "5"\n{tool}')
    assert build_sdist(pkg, tmp_path / "dist").name == "other"


def test_pyproject_for_other_packages_is_skipped(tmp_path):
    pkg = copy("pyproject_beside", tmp_path)
    (pkg.parent / "pyproject.toml").write_text(
        '[project]\nname = "tools"\nversion = "5"\n[tool.setuptools.packages.find]\ninclude = ["tools*"]\n'
    )
    built = build_sdist(pkg, tmp_path / "dist")
    assert (built.name, built.version) == ("trainer", "0.0.0")


def test_dynamic_version_is_refused_with_a_fix(tmp_path):
    pkg = copy("pyproject_beside", tmp_path)
    (pkg.parent / "pyproject.toml").write_text('[project]\nname = "trainer"\ndynamic = ["version"]\n')
    with pytest.raises(PackagingError, match=r"pyproject.toml: \[project\] version is dynamic.*package.version"):
        build_sdist(pkg, tmp_path / "dist")


def test_setup_py_with_code_is_run_and_the_sdist_stays_byte_identical(tmp_path):
    pkg = copy("setup_with_code", tmp_path)
    meta = find_metadata(pkg)
    assert meta.how == "run"
    first = build_sdist(pkg, tmp_path / "a")
    again = build_sdist(pkg, tmp_path / "b")
    assert (first.name, first.version, first.requirements) == ("computed", "3.1.4", ("PyYAML>=5.1", "numpy"))
    assert first.path.read_bytes() == again.path.read_bytes()
    assert "run with setuptools" in first.metadata


def test_setup_py_that_raises_is_one_line_naming_file_and_line(tmp_path):
    pkg = copy("setup_raises", tmp_path)
    with pytest.raises(PackagingError) as info:
        build_sdist(pkg, tmp_path / "dist")
    message = str(info.value)
    assert f"{pkg.parent / 'setup.py'}:5: setup.py raised JSONDecodeError" in message
    assert "\n" not in message


def test_setup_py_that_hangs_is_stopped(tmp_path):
    from cloudtrain.packaging.setup_run import run_setup_py

    pkg = copy("setup_raises", tmp_path)
    (pkg.parent / "setup.py").write_text("import time\ntime.sleep(30)\n")
    with pytest.raises(PackagingError, match="ran longer than 0.5 s"):
        run_setup_py(pkg.parent / "setup.py", timeout_s=0.5)


def test_config_version_differing_from_setup_py_is_one_warning_and_the_config_wins(tmp_path):
    built = build_sdist(copy("tutorial_mgpu", tmp_path), tmp_path / "dist", version="0.3", given_in="job.yaml")
    assert built.version == "0.3"
    [warning] = [w for w in built.warnings if "differs" in w]
    assert "package.version '0.3' in job.yaml" in warning and "version '0.2' in" in warning
    assert str(tmp_path / "tutorial_mgpu" / "setup.py") in warning


def test_same_value_in_config_and_setup_py_is_no_warning(tmp_path):
    built = build_sdist(copy("tutorial_mgpu", tmp_path), tmp_path / "dist", name="MGPU", version="0.2")
    assert built.warnings == ()


def test_a_requirements_file_inside_a_package_its_setup_py_describes_is_not_installed(tmp_path):
    """As gcloud and Vertex AI install such a package: setup.py's install_requires, never trainer/requirements.txt
    (a sample's pinned tensorflow==2.12.1 there would replace the image's TensorFlow); one warning says so."""
    pkg = copy("tutorial_mgpu", tmp_path)
    (pkg / "requirements.txt").write_text("# extra\nscikit-learn==1.2.0\ntensorflow==2.12.1\n")
    built = build_sdist(pkg, tmp_path / "dist")
    assert built.requirements == ("scikit-learn>=1.3",)
    [warning] = [w for w in built.warnings if "requirements.txt" in w]
    assert warning.startswith(f"{pkg / 'requirements.txt'} is not installed: the cloud installs what ")
    assert str(pkg.parent / "setup.py") in warning


def test_config_requirement_conflicting_with_setup_py(tmp_path):
    with pytest.raises(PackagingError, match=r"'scikit-learn<1' in package.requirements in job.yaml"):
        build_sdist(
            copy("tutorial_mgpu", tmp_path), tmp_path / "dist", requirements=["scikit-learn<1"], given_in="job.yaml"
        )


def test_config_requirements_add_to_the_metadata_and_an_empty_requirements_file_says_nothing(tmp_path):
    pkg = copy("tutorial_mgpu", tmp_path)
    (pkg / "requirements.txt").write_text("# nothing here\n\n")
    built = build_sdist(pkg, tmp_path / "dist", requirements=["PyYAML"])
    assert built.requirements == ("scikit-learn>=1.3", "PyYAML")
    assert not [w for w in built.warnings if "requirements.txt" in w]


def test_both_beside_and_inside_uses_beside_and_says_so(tmp_path):
    pkg = copy("tutorial_mgpu", tmp_path)
    (pkg / "setup.py").write_text("from setuptools import setup\nsetup(name='x', version='9')\n")
    built = build_sdist(pkg, tmp_path / "dist")
    assert built.name == "mgpu"
    assert any(f"{pkg / 'setup.py'} is not used" in w for w in built.warnings)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cloudtrain", *args], cwd=cwd, capture_output=True, text=True)


def test_package_and_submit_give_the_same_artifact(tmp_path):
    pkg = copy("tutorial_mgpu", tmp_path)
    config = tmp_path / "job.yaml"
    config.write_text(
        "name: mgpu\nbackend: vertex\nregion: us-central1\nproject: p\nstaging_bucket: gs://b\n"
        "machine: {type: n1-standard-4}\npackage: {path: tutorial_mgpu/trainer, module: trainer.task}\n"
    )
    packaged = _cli("package", str(pkg), "--out", str(tmp_path / "dist"), "-o", "json", cwd=tmp_path)
    dry = _cli("submit", "--config", str(config), "--dry-run", "-o", "json", cwd=tmp_path)
    assert packaged.returncode == 0 and dry.returncode == 0, packaged.stderr + dry.stderr
    import json

    a, b = json.loads(packaged.stdout), json.loads(dry.stdout)["package"]
    assert Path(a["file"]).name == Path(b["file"]).name and a["sha256"] == b["sha256"]
    assert Path(a["file"]).name.startswith("mgpu-0.2-")
    assert "setup.py" in a["metadata"]


def test_dry_run_summary_says_where_the_metadata_came_from(tmp_path):
    copy("tutorial_mgpu", tmp_path)
    config = tmp_path / "job.yaml"
    config.write_text(
        "name: mgpu\nbackend: vertex\nregion: us-central1\nproject: p\nstaging_bucket: gs://b\n"
        "machine: {type: n1-standard-4}\npackage: {path: tutorial_mgpu/trainer, module: trainer.task}\n"
    )
    out = _cli(
        "submit",
        "--config",
        str(config),
        "--dry-run",
        cwd=tmp_path,
    ).stdout
    assert "metadata" in out and "setup.py (beside the package, read)" in out.replace("\n", "")
    assert "scikit-learn>=1.3" in out


def test_cli_setup_py_that_raises_is_exit_2_without_traceback(tmp_path):
    pkg = copy("setup_raises", tmp_path)
    result = _cli("package", str(pkg), "--out", str(tmp_path / "dist"), cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0 and "setup.py raised JSONDecodeError" in result.stderr
