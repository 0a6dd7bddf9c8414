"""The package of a ``package.script`` job: the source folder wrapped so that pip can install it, as one package,
``cloudtrain_script``, holding the folder as data (``src/``) beside the launcher (:mod:`.script_main`). One sdist
serves every backend; requirements are the folder's and its ``setup.py``'s, as the SageMaker toolkit installs them."""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from cloudtrain.errors import PackagingError

from .archive import Member, reader
from .project import find_script_metadata
from .sdist import SIZE_WARNING_BYTES, BuiltPackage, SdistOptions, prepare_with
from .tree import collect

if TYPE_CHECKING:
    from typing_extensions import Unpack

PACKAGE = "cloudtrain_script"  # the module Vertex runs: python -m cloudtrain_script
SOURCES = "src"
LAUNCHER_SOURCE = Path(__file__).with_name("script_main.py")
DEFAULT_NAME = "script"
# The training toolkit's rule for sagemaker_program: a relative path of letters, digits, . _ + - /.
#: A script's path inside its source folder: relative, posix, names a shell and a URL take as they are.
SCRIPT_PATH = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9._+\-]*(?:/[A-Za-z0-9_+][A-Za-z0-9._+\-]*)*")


def check_source_dir(source_dir: Path) -> Path:
    """The source folder, absolute; any name (it is never imported)."""
    source_dir = Path(source_dir)
    if not source_dir.is_dir():
        what = "is a file, not a folder" if source_dir.exists() else "does not exist"
        raise PackagingError(
            f"source folder {source_dir} {what}",
            "point package.path at the folder holding the script (SageMaker's source_dir)",
        )
    return source_dir.absolute()


def check_script(source_dir: Path, script: str) -> str:
    """``script`` as a posix path inside the source folder, packaged and runnable as ``python SCRIPT``."""
    root = check_source_dir(source_dir)
    parts = PurePosixPath(script).parts
    if not SCRIPT_PATH.fullmatch(script or "") or any(p in (".", "..") for p in parts):
        raise PackagingError(
            f"package.script {script!r} is not a relative path inside the source folder",
            "name the file as SageMaker's entry_point does, e.g. train.py or src/train.py",
        )
    if not script.endswith(".py"):
        raise PackagingError(f"package.script {script!r} is not a Python file", "give the .py file to run")
    path = root / script
    if not path.is_file():
        found = sorted(p.relative_to(root).as_posix() for p in root.glob("*.py"))
        raise PackagingError(
            f"package.script {script!r} not found in {root}", f"scripts there: {', '.join(found[:8]) or 'none'}"
        )
    if script not in {f.relpath for f in collect(root).files}:
        raise PackagingError(
            f"package.script {script!r} is excluded from the package by an ignore rule",
            f"remove the pattern that matches it from .gitignore / .cloudtrainignore in {root}",
        )
    return script


def build_script_sdist(source_dir: Path, out_dir: Path, script: str, **options: Unpack[SdistOptions]) -> BuiltPackage:
    """Build the ``cloudtrain_script`` sdist of ``source_dir`` into ``out_dir``; ``extra``: generated files."""
    root = check_source_dir(source_dir)
    check_script(root, script)
    own = project if (project := options.get("project")) is not None else find_script_metadata(root)
    if (
        options.get("name") is None
        and own.name is None
        and not re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?", root.name)
    ):
        options = {**options, "name": DEFAULT_NAME}  # a folder name that is no distribution name ("my code")
    p = prepare_with(root, own, out_dir, options)
    launcher_files = {f"{PACKAGE}/__init__.py": "", f"{PACKAGE}/script.json": json.dumps({"script": script}) + "\n"}
    members = p.generated_members(PACKAGE, {**launcher_files, **(options.get("extra") or {})})
    members.append(Member(f"{p.top}/{PACKAGE}/__main__.py", open=reader(LAUNCHER_SOURCE)))
    members += [
        Member(f"{p.top}/{PACKAGE}/{SOURCES}/{f.relpath}", open=reader(f.path), executable=f.executable)
        for f in p.tree.files
    ]
    return p.archive(out_dir, members, root, own, options.get("size_warning_bytes", SIZE_WARNING_BYTES))


def has_setup_py(package: BuiltPackage) -> bool:
    """Whether the source folder of a script sdist has a ``setup.py`` (the toolkit then runs ``-m``)."""
    return any(f.split("/")[1:] == [PACKAGE, SOURCES, "setup.py"] for f in package.files)


def source_members(sdist: Path) -> list[tuple[str, bytes, int]]:
    """The source folder inside a script sdist: (path relative to the folder, bytes, mode), sorted."""
    out = []
    with tarfile.open(sdist, "r:gz") as tar:
        for info in tar.getmembers():
            parts = info.name.split("/")
            if info.isfile() and parts[1:3] == [PACKAGE, SOURCES] and len(parts) > 3:
                member = tar.extractfile(info)  # None only for what is not a file
                if member is not None:
                    out.append(("/".join(parts[3:]), member.read(), info.mode))
    return sorted(out)


def extract_sources(sdist: Path, dest: Path) -> list[str]:
    """Write the source folder of a script sdist into ``dest`` (SageMaker's /opt/ml/code); its paths."""
    written = []
    for rel, data, mode in source_members(sdist):
        path = Path(dest, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)
        written.append(rel)
    return written
