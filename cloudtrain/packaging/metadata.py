"""The build metadata cloudtrain writes for a bare package folder, as gcloud does: ``setup.py``, ``pyproject.toml`` and
``PKG-INFO``, from the package's own metadata (:mod:`.project`), the config and ``requirements.txt``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from cloudtrain.errors import PackagingError

DEFAULT_VERSION = "0.0.0"
REQUIREMENTS_FILE = "requirements.txt"
SETUPTOOLS_REQUIREMENT = "setuptools>=62.3"  # first release with "**" in package_data

_NAME = re.compile(r"[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9]", re.IGNORECASE)
# PEP 440, appendix B: the permissive form every tool accepts and normalizes.
_VERSION = re.compile(
    r"""v?(?:(?P<epoch>[0-9]+)!)?(?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?""",
    re.VERBOSE | re.IGNORECASE,
)
_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc", "rc": "rc"}
# PEP 508, loosely: a name, optional extras, then a version, an "@ url" or a marker.
_REQUIREMENT = re.compile(
    r"[A-Z0-9](?:[A-Z0-9._-]*[A-Z0-9])?\s*(?:\[[^\]]*\])?\s*(?:@\s*\S+\s*|[<>=!~(][^;]*)?(?:;.*)?",
    re.IGNORECASE,
)


def normalize_name(name: str) -> str:
    """A distribution name as it appears in sdist file names (PEP 625): ``My-Trainer`` → ``my_trainer``."""
    if not _NAME.fullmatch(name or ""):
        raise PackagingError(
            f"package name {name!r} is not a valid distribution name",
            "use letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
        )
    return re.sub(r"[-_.]+", "_", name).lower()


def normalize_version(version: str) -> str:
    """A PEP 440 version in its normal form: ``1.0-RC1`` → ``1.0rc1``, ``2024.01`` → ``2024.1``."""
    m = _VERSION.fullmatch((version or "").strip())
    if not m:
        raise PackagingError(
            f"package version {version!r} is not a PEP 440 version",
            "use e.g. '0.1.0', '1.0rc1', '1.0.post1' or '1.0.dev0'",
        )
    out = f"{int(m['epoch'])}!" if m["epoch"] and int(m["epoch"]) else ""
    out += ".".join(str(int(part)) for part in m["release"].split("."))
    if m["pre"]:
        out += _PRE[m["pre_l"].lower()] + str(int(m["pre_n"] or 0))
    if m["post"]:
        out += f".post{int(m['post_n1'] or m['post_n2'] or 0)}"
    if m["dev"]:
        out += f".dev{int(m['dev_n'] or 0)}"
    if m["local"]:
        out += "+" + re.sub(r"[-_.]", ".", m["local"].lower())
    return out


def read_requirements(
    package_dir: Path,
    extra: Sequence[str] = (),
    *,
    extra_where: str = "requirements",
    declared: Sequence[str] = (),
    declared_where: str = "",
    file: bool = True,
) -> tuple[str, ...]:
    """``declared``, ``extra`` (the config's), then ``requirements.txt`` (``file``), deduplicated in order. pip options,
    paths and URLs are refused, and so is one requirement pinned two ways."""
    if isinstance(extra, str):  # one requirement passed bare, not a list of characters
        extra = [extra]
    lines: list[tuple[str, str]] = [(str(r), declared_where) for r in declared]
    lines += [(str(r), extra_where) for r in extra]
    path = Path(package_dir) / REQUIREMENTS_FILE
    if file and path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise PackagingError(f"cannot read {path}: {e}", "save it as UTF-8 text") from e
        lines += [(line, f"{path}:{n}") for n, line in enumerate(text.splitlines(), start=1)]
    kept: dict[tuple[str, str], tuple[str, str, str]] = {}  # (name, marker) → (requirement, specifier, where)
    for line, where in lines:
        requirement = " ".join(re.sub(r"(^|\s)#.*", "", line).split())
        if not requirement:
            continue
        if requirement.startswith("-"):
            raise PackagingError(
                f"{where}: pip option {requirement!r} cannot become package metadata",
                "list the requirements themselves, one per line",
            )
        if not _REQUIREMENT.fullmatch(requirement):
            raise PackagingError(
                f"{where}: {requirement!r} is not a PEP 508 requirement",
                "write 'name', 'name>=1.2' or 'name @ https://…' (not a bare path or URL)",
            )
        key, specifier = _requirement_key(requirement)
        if key not in kept:
            kept[key] = (requirement, specifier, where)
            continue
        first, first_spec, first_where = kept[key]
        if specifier and first_spec and specifier != first_spec:
            raise PackagingError(
                f"requirement {key[0]} is pinned differently: "
                f"{first!r} in {first_where} and {requirement!r} in {where}",
                "keep one of them (the package's own metadata is what the cloud installs)",
            )
        if specifier and not first_spec:
            kept[key] = (requirement, specifier, where)
    return tuple(r for r, _, _ in kept.values())


#: The distributions that are TensorFlow itself: pip installs a pinned one over the image's.
TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-intel")


def replaced_tensorflow(requirements: Iterable[str], image_tensorflow: str | None) -> tuple[str, str] | None:
    """``(requirement, version)`` of a requirement that pins another TensorFlow release than the image's
    (``tensorflow==2.12.1`` over TensorFlow 2.11): the TensorFlow that really runs; None when none does."""
    for requirement in requirements:
        (name, _marker), specifier = _requirement_key(requirement)
        pinned = re.fullmatch(r"===?v?(\d+\.\d+)(\.\d+)?(?:\.\*)?", specifier)
        if name in TENSORFLOW_DISTRIBUTIONS and pinned and image_tensorflow:
            if pinned[1] != ".".join(image_tensorflow.split(".")[:2]):
                return requirement, pinned[1] + (pinned[2] or "")
    return None


def requirement_name(requirement: str) -> str:
    """The normalised project name of a PEP 508 requirement: ``H5Py[x]==2.7`` → ``h5py``."""
    return _requirement_key(requirement)[0][0]


def _requirement_key(requirement: str) -> tuple[tuple[str, str], str]:
    body, _, marker = requirement.partition(";")
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?(.*)", body)
    assert match is not None  # checked against _REQUIREMENT already
    name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
    return (name, "".join(marker.split())), "".join(match.group(3).split())


def pkg_info(name: str, version: str, requirements: Iterable[str]) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        "Summary: Training package built by cloudtrain",
        *(f"Requires-Dist: {r}" for r in requirements),
    ]
    return "\n".join(lines) + "\n"


def setup_py(name: str, version: str, package: str, requirements: Sequence[str]) -> str:
    requires = "".join(f"        {r!r},\n" for r in requirements)
    return (
        "# Generated by cloudtrain, as gcloud does for --package-path.\n"
        "from setuptools import find_packages, setup\n"
        "\n"
        "setup(\n"
        f"    name={name!r},\n"
        f"    version={version!r},\n"
        "    packages=find_packages(),\n"
        f"    package_data={{{package!r}: ['**/*']}},\n"
        f"    install_requires=[\n{requires}    ],\n"
        ")\n"
    )


def pyproject_toml() -> str:
    return (
        "# Generated by cloudtrain.\n"
        "[build-system]\n"
        f'requires = ["{SETUPTOOLS_REQUIREMENT}"]\n'
        'build-backend = "setuptools.build_meta"\n'
    )
