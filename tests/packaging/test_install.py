"""cloudtrain's in-process install of its own sdists puts in site-packages what pip's install of the
same sdist puts there, file for file and byte for byte (the package layer of a local run's code-only
edit relies on it: cloudtrain/packaging/install.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cloudtrain.packaging import build_script_sdist, build_sdist
from cloudtrain.packaging.install import install_sdist


def _pip_install(sdist: Path, target: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--no-deps"]
    cmd += ["--no-index", "--no-build-isolation", "--no-compile", "--target", str(target), str(sdist)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def _tree(site: Path) -> dict[str, bytes]:
    """Every file under ``site`` but the install records, which say who installed it."""
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in site.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.parent.name.endswith(".dist-info")
    }


def _metadata(dist_info: Path) -> tuple[str, str, list[str]]:
    """Name, version and requirements, as importlib.metadata reads them."""
    from email.parser import Parser

    message = Parser().parsestr((dist_info / "METADATA").read_text())
    return message["Name"], message["Version"], message.get_all("Requires-Dist") or []


def _package(root: Path) -> Path:
    pkg = root / "deep_trainer"
    for folder in ("models", "models/heads", "configs", "configs/nested", "notes", "v1.2"):
        (pkg / folder).mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text("print('task')\n")
    (pkg / "models" / "__init__.py").write_text("")
    (pkg / "models" / "net.py").write_text("NET = 1\n")
    (pkg / "models" / "heads" / "__init__.py").write_text("")
    (pkg / "models" / "heads" / "head.py").write_text("HEAD = 2\n")
    (pkg / "models" / "weights.bin").write_bytes(bytes(range(256)))
    (pkg / "configs" / "default.json").write_text('{"lr": 0.1}\n')
    (pkg / "configs" / "nested" / "more.yaml").write_text("a: 1\n")
    (pkg / "configs" / "nested" / "helper.py").write_text("H = 3\n")  # a module outside any package: data
    (pkg / "notes" / ".hidden").write_text("glob('**/*') skips me\n")
    (pkg / "v1.2" / "__init__.py").write_text("")  # a folder with a dot: never a package
    (pkg / "v1.2" / "old.py").write_text("OLD = 1\n")
    return pkg


@pytest.mark.parametrize("kind", ["package", "script"])
def test_the_in_process_install_is_pips_file_for_file(tmp_path, kind):
    if kind == "package":
        sdist = build_sdist(
            _package(tmp_path / "src"),
            tmp_path / "dist",
            requirements=["numpy>=1.26"],
            extra={"side_pkg/__init__.py": "", "side_pkg/launch.py": "L = 1\n", "side_pkg/data.txt": "not data\n"},
        )
    else:
        src = tmp_path / "code"
        (src / "lib").mkdir(parents=True)
        (src / "train.py").write_text("print('train')\n")
        (src / "lib" / "util.py").write_text("U = 1\n")
        (src / "requirements.txt").write_text("pandas\n")
        sdist = build_script_sdist(src, tmp_path / "dist", "train.py")
    _pip_install(sdist.path, tmp_path / "pip")
    written = install_sdist(sdist.path, tmp_path / "ours")
    ours, pips = _tree(tmp_path / "ours"), _tree(tmp_path / "pip")
    assert ours == pips and len(ours) >= 4
    assert sorted(p for p in written if ".dist-info/" not in p) == sorted(ours)
    dist_info = f"{sdist.name}-{sdist.version}.dist-info"
    assert _metadata(tmp_path / "ours" / dist_info) == _metadata(tmp_path / "pip" / dist_info)
    assert _metadata(tmp_path / "ours" / dist_info)[2] == list(sdist.requirements)
    assert (tmp_path / "ours" / dist_info / "top_level.txt").read_text() == (
        tmp_path / "pip" / dist_info / "top_level.txt"
    ).read_text()
