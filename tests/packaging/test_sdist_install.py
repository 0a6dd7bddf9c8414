"""The built sdist installs with pip, offline, and its module runs with `python -m`.

The throwaway venv gets pip and setuptools from the test environment through a ``.pth``
line (read-only), and pip runs with ``--no-index --no-build-isolation``: no network.
"""

from __future__ import annotations

import os
import subprocess
import sysconfig
import venv
from pathlib import Path

import pytest

from cloudtrain.packaging import build_sdist
from tests.packaging.sdist_helpers import write

pytestmark = pytest.mark.slow


@pytest.fixture
def offline_python(tmp_path: Path) -> Path:
    where = tmp_path / "venv"
    venv.create(where, with_pip=False, symlinks=os.name != "nt")
    python = where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.check_output(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
    ).strip()
    Path(purelib, "_host_tools.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONNOUSERSITE="1")
    return env


def _pip_install(python: Path, sdist: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [python, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-cache-dir", sdist],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=180,
    )


def test_sdist_installs_offline_and_its_module_runs(mini, tmp_path, offline_python):
    write(mini, "configs/extra/notes.txt", "data files travel too\n")
    built = build_sdist(mini, tmp_path / "out")
    installed = _pip_install(offline_python, built.path)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    elsewhere = tmp_path / "run"
    elsewhere.mkdir()
    ran = subprocess.run(
        [offline_python, "-m", "mini_trainer.task", "--epochs", "3"],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=elsewhere,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "mini_trainer ok epochs=3 weight=0.5120\n"

    probe = (
        "import importlib.metadata as m, pathlib, mini_trainer as p;"
        "print(pathlib.Path(p.__file__).parent);"
        "print(m.version('mini_trainer'), m.requires('mini_trainer'));"
        "print((pathlib.Path(p.__file__).parent / 'configs/extra/notes.txt').read_text(), end='')"
    )
    out = subprocess.check_output([offline_python, "-c", probe], text=True, env=_env(), cwd=elsewhere)
    where, meta, notes = out.splitlines()
    assert Path(where).is_relative_to(offline_python.parent.parent), "imported from the venv, not the source"
    assert meta == "0.0.0 ['PyYAML>=5.1']"
    assert notes == "data files travel too"


def test_pip_honours_the_generated_requirements(mini, tmp_path, offline_python):
    built = build_sdist(mini, tmp_path / "out", requirements=["cloudtrain-no-such-dependency>=1"])
    installed = _pip_install(offline_python, built.path)
    assert installed.returncode != 0
    assert "cloudtrain-no-such-dependency>=1" in installed.stderr
