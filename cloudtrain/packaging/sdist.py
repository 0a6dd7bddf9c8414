"""Build the sdist of a package folder in-process and reproducibly (no build isolation, no network), archived under its
content hash (:mod:`.archive`), so identical builds share a name and an upload can be skipped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from cloudtrain.errors import PackagingError
from cloudtrain.text.numbers import size as size_text

from . import metadata
from .archive import Member, reader, write_archive
from .project import ProjectMetadata, find_metadata
from .tree import Tree, check_package_dir, collect

if TYPE_CHECKING:
    from typing_extensions import Unpack

SIZE_WARNING_BYTES = 50 * 2**20


@dataclass(frozen=True)
class BuiltPackage:
    path: Path  # the .tar.gz: "{name}-{version}-{sha256[:12]}.tar.gz" in out_dir
    sha256: str  # hex digest of the .tar.gz bytes
    size: int  # bytes of the .tar.gz
    name: str  # distribution name, normalized as in sdist file names ("my_trainer")
    version: str  # normalized PEP 440 version
    filename: str  # path.name
    files: tuple[str, ...]  # archive paths of the files (not folders), sorted
    warnings: tuple[str, ...]  # one line each: size above the threshold, credentials left out
    metadata: str = "generated"  # where name, version and requirements came from (one line)
    requirements: tuple[str, ...] = ()  # Requires-Dist, in order
    left_out: tuple[tuple[str, str], ...] = ()  # (archive path, why): secrets, .env files, links to excluded files
    unpacked_size: int = 0  # bytes of the package's own files once unpacked


def required(package: BuiltPackage | None, job_name: str) -> BuiltPackage:
    """The sdist of a job that runs a package: only a ``container:`` job has none (``package`` None)."""
    if package is None:
        raise ValueError(f"job {job_name} runs a package, but none was built for it")
    return package


class SdistOptions(TypedDict, total=False):
    """What both builders take beyond the folders: the config's ``name`` / ``version`` (unset: the package's),
    ``requirements``, ``size_warning_bytes``, ``given_in``, ``project``, ``extra``, ``include``."""

    name: str | None
    version: str | None
    requirements: Sequence[str]
    size_warning_bytes: int
    given_in: str
    project: ProjectMetadata | None
    extra: dict[str, str] | None
    include: Sequence[str]


def build_sdist(package_dir: Path, out_dir: Path, **options: Unpack[SdistOptions]) -> BuiltPackage:
    """Build ``package_dir`` (the package folder itself, e.g. ``trainer/``) into ``out_dir``. The config's ``name`` /
    ``version`` win over the metadata (warning when they differ), else the folder's name and ``0.0.0``, as gcloud does.
    Anything the user must fix is a :class:`~cloudtrain.errors.PackagingError`. ``extra``: generated files (path →
    text); ``include``: credential-like files to package anyway."""
    root = check_package_dir(Path(package_dir))
    if Path(out_dir).resolve() == root.resolve():
        raise PackagingError(
            f"output folder {out_dir} is the package folder itself",
            "write the package somewhere else, e.g. a dist/ folder next to it",
        )
    own = project if (project := options.get("project")) is not None else find_metadata(root)
    # its own setup.py / pyproject.toml's requirements, as gcloud installs it: not a requirements.txt inside
    p = prepare_with(root, own, out_dir, options, requirements_file=own.source is None)
    members = p.generated_members(root.name, options.get("extra"))
    members += [
        Member(f"{p.top}/{root.name}/{f.relpath}", open=reader(f.path), executable=f.executable) for f in p.tree.files
    ]
    return p.archive(out_dir, members, root, own, options.get("size_warning_bytes", SIZE_WARNING_BYTES))


@dataclass
class Prepared:
    """What both kinds of sdist (package and script mode) settle before listing their members."""

    dist: str
    version: str
    requires: tuple[str, ...]
    tree: Tree
    warnings: list[str]

    @property
    def top(self) -> str:
        return f"{self.dist}-{self.version}"

    def generated_members(self, import_name: str, extra: dict[str, str] | None = None) -> list[Member]:
        """PKG-INFO, pyproject.toml and a setup.py installing ``import_name``, then ``extra`` files."""
        generated = {
            "PKG-INFO": metadata.pkg_info(self.dist, self.version, self.requires),
            "pyproject.toml": metadata.pyproject_toml(),
            "setup.py": metadata.setup_py(self.dist, self.version, import_name, self.requires),
            **(extra or {}),
        }
        return [Member(f"{self.top}/{n}", data=text.encode()) for n, text in generated.items()]

    def archive(
        self, out_dir: Path, members: list[Member], root: Path, own: ProjectMetadata, size_warning_bytes: int
    ) -> BuiltPackage:
        return archive_package(
            out_dir,
            self.top,
            members,
            root=root,
            tree=self.tree,
            dist=self.dist,
            version=self.version,
            requires=self.requires,
            own=own,
            warnings=self.warnings,
            size_warning_bytes=size_warning_bytes,
        )


def prepare_with(
    root: Path, own: ProjectMetadata, out_dir: Path, options: SdistOptions, *, requirements_file: bool = True
) -> Prepared:
    """:func:`prepare` with a builder's options."""
    return prepare(
        root,
        own,
        options.get("name"),
        options.get("version"),
        options.get("requirements", ()),
        options.get("given_in", "the config"),
        out_dir,
        options.get("include", ()),
        requirements_file=requirements_file,
    )


def prepare(
    root: Path,
    own: ProjectMetadata,
    name: str | None,
    version: str | None,
    requirements: Sequence[str],
    given_in: str,
    out_dir: Path,
    include: Sequence[str] = (),
    *,
    requirements_file: bool = True,
) -> Prepared:
    """Name and version (config over metadata), requirements and the file tree (minus ``out_dir``);
    ``requirements_file``: the folder's ``requirements.txt`` is installed too (else one warning if it lists any)."""
    warnings = [*own.ignored]
    dist, version = name_and_version(root, own, name, version, given_in, warnings)
    requires = metadata.read_requirements(
        root,
        requirements,
        extra_where=f"package.requirements in {given_in}",
        declared=own.requirements,
        declared_where=str(own.source),
        file=requirements_file,
    )
    unread = root / metadata.REQUIREMENTS_FILE
    if not requirements_file and unread.is_file() and _lists_any(unread):
        warnings.append(
            f"{unread} is not installed: the cloud installs what {own.source} declares (gcloud and Vertex AI "
            "read no requirements file inside the package); list what it needs there, or in package.requirements"
        )
    return Prepared(dist, version, requires, collect(root, skip=[Path(out_dir)], include=include), warnings)


def _lists_any(path: Path) -> bool:
    try:
        return any(line.split("#")[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return True  # unreadable: say it is not installed all the same


def tree_warnings(root: Path, tree: Tree, filename: str, size: int, size_warning_bytes: int) -> list[str]:
    """One line each: files unpacking above the size threshold; credential-like files left out."""
    warnings = []
    unpacked = tree.unpacked_size
    if unpacked > size_warning_bytes:
        biggest = sorted(tree.files, key=lambda f: (-f.size, f.relpath))[:3]
        listed = ", ".join(f"{root.name}/{f.relpath} ({size_text(f.size)})" for f in biggest)
        warnings.append(
            f"package {filename} unpacks to {size_text(unpacked)} on the training machine"
            f" ({size_text(size)} compressed), above the {size_text(size_warning_bytes)} warning threshold;"
            f" biggest files: {listed} — read large data from the bucket"
            f" and add it to {root / '.cloudtrainignore'}"
        )
    if tree.credentials:
        why = dict(tree.left_out)
        listed = ", ".join(
            f"{root.name}/{c}" + (f" ({why[c]})" if why.get(c, "").startswith("holds") else "")
            for c in tree.credentials
        )
        warnings.append(
            f"left out credential-like files: {listed} — keys never go into a package; move them out of {root}"
            " (or package one on purpose with --include PATTERN)"
        )
    if tree.forced:
        listed = ", ".join(f"{root.name}/{path} (--include {pattern})" for path, pattern in tree.forced)
        warnings.append(
            f"packaged credential-like files: {listed} — whoever can read the staging bucket or the "
            "job's package can read them; refer to secrets under secrets: instead (docs/how-to/secrets.md)"
        )
    return warnings


def name_and_version(
    root: Path, own: ProjectMetadata, name: str | None, version: str | None, given_in: str, warnings: list[str]
) -> tuple[str, str]:
    """The config's value, else the metadata's, else generated; a difference is one warning."""
    chosen = []
    for field, given, declared, generated, normalize in (
        ("name", name, own.name, root.name, metadata.normalize_name),
        ("version", version, own.version, metadata.DEFAULT_VERSION, metadata.normalize_version),
    ):
        if given is not None and declared is not None and normalize(given) != normalize(declared):
            warnings.append(
                f"package.{field} {given!r} in {given_in} differs from {field} {declared!r} in {own.source};"
                f" using {given!r} (the config wins)"
            )
        chosen.append(normalize(next(v for v in (given, declared, generated) if v is not None)))
    return chosen[0], chosen[1]


def archive_package(
    out_dir: Path,
    top: str,
    members: list[Member],
    *,
    root: Path,
    tree: Tree,
    dist: str,
    version: str,
    requires: tuple[str, ...],
    own: ProjectMetadata,
    warnings: list[str],
    size_warning_bytes: int,
) -> BuiltPackage:
    """Write the members as the normalised archive and describe it: the one ending of every sdist build."""
    written = write_archive(Path(out_dir), top, members)
    warnings += tree_warnings(root, tree, written.path.name, written.size, size_warning_bytes)
    return BuiltPackage(
        path=written.path,
        sha256=written.sha256,
        size=written.size,
        name=dist,
        version=version,
        filename=written.path.name,
        files=tuple(sorted((m.name for m in members), key=lambda n: n.split("/"))),
        warnings=tuple(warnings),
        metadata=own.describe(root),
        requirements=requires,
        left_out=tuple((f"{root.name}/{path}", why) for path, why in tree.left_out),
        unpacked_size=tree.unpacked_size,
    )
