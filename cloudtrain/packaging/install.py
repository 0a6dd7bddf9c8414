"""Install one of cloudtrain's own sdists into a site-packages folder as ``pip install --no-deps`` does, in-process and
in milliseconds: their ``setup.py`` is always cloudtrain's, so what pip installs is known without setuptools
(tests/packaging/test_install.py holds it to pip's install, file for file)."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path, PurePosixPath

from cloudtrain.errors import PackagingError

_PACKAGE_DATA = re.compile(r"package_data=\{'([^']+)': \['\*\*/\*'\]\}")


def install_sdist(sdist: Path, site: Path) -> list[str]:
    """Put what pip would install from ``sdist`` into ``site``; the paths written, relative to it."""
    with tarfile.open(sdist, "r:gz") as tar:
        members = {m.name: m for m in tar.getmembers() if m.isfile()}
        top = next(iter(members)).split("/")[0]  # "<name>-<version>"
        inside = {name[len(top) + 1 :]: m for name, m in members.items() if name.startswith(top + "/")}
        setup_py, pkg_info = _text(tar, inside, "setup.py", sdist), _text(tar, inside, "PKG-INFO", sdist)
        found = _PACKAGE_DATA.search(setup_py)
        if found is None or "find_packages()" not in setup_py:
            raise PackagingError(f"{sdist} was not built by cloudtrain (its setup.py is not the generated one)")
        data_package = found[1]
        packages = _packages(inside)
        wanted = sorted(rel for rel in inside if _is_module(rel, packages) or _is_data(rel, data_package))
        written = []
        for rel in wanted:
            target = site / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            member = tar.extractfile(inside[rel])
            if member is None:
                continue
            target.write_bytes(member.read())
            target.chmod(inside[rel].mode & 0o777 | 0o600)
            written.append(rel)
    return written + _dist_info(site, top, pkg_info, packages, written)


def _text(tar: tarfile.TarFile, inside: dict[str, tarfile.TarInfo], name: str, sdist: Path) -> str:
    member = tar.extractfile(inside[name]) if name in inside else None
    if member is None:
        raise PackagingError(f"{sdist} has no {name}: it is not an sdist cloudtrain built")
    return member.read().decode()


def _packages(inside: dict[str, tarfile.TarInfo]) -> set[PurePosixPath]:
    """The folders ``find_packages()`` finds: ``__init__.py``, no ``.`` in the name, every folder above a package."""
    candidates = {PurePosixPath(rel).parent for rel in inside if PurePosixPath(rel).name == "__init__.py"}
    return {
        folder
        for folder in candidates
        if folder.parts  # an __init__.py beside setup.py makes no package
        and all(
            "." not in part and PurePosixPath(*folder.parts[: i + 1]) in candidates
            for i, part in enumerate(folder.parts)
        )
    }


def _is_module(rel: str, packages: set[PurePosixPath]) -> bool:
    path = PurePosixPath(rel)
    return path.suffix == ".py" and path.parent in packages


def _is_data(rel: str, package: str) -> bool:
    """Matched by ``package_data={package: ['**/*']}``: below the package, no hidden part (glob skips them)."""
    parts = PurePosixPath(rel).parts
    return len(parts) > 1 and parts[0] == package and not any(p.startswith(".") for p in parts[1:])


def _dist_info(site: Path, top: str, pkg_info: str, packages: set[PurePosixPath], written: list[str]) -> list[str]:
    """The ``.dist-info`` pip writes (``importlib.metadata`` reads the version and requirements there)."""
    name, _, version = top.rpartition("-")
    folder = f"{name}-{version}.dist-info"
    top_level = sorted({p.parts[0] for p in packages})
    files = {
        "METADATA": pkg_info,
        "INSTALLER": "cloudtrain\n",
        "WHEEL": "Wheel-Version: 1.0\nGenerator: cloudtrain\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        "top_level.txt": "".join(f"{t}\n" for t in top_level),
    }
    record = [*written, *(f"{folder}/{f}" for f in files), f"{folder}/RECORD"]
    files["RECORD"] = "".join(f"{path},,\n" for path in record)
    (site / folder).mkdir(parents=True, exist_ok=True)
    for file, text in files.items():
        (site / folder / file).write_text(text)
    return [f"{folder}/{f}" for f in files]
