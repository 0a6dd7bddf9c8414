"""The files of a package directory that go into its sdist: links followed only inside it (a loop is refused), and a
link never brings in an excluded file."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cloudtrain.errors import PackagingError
from cloudtrain.secrets.files import credential_in, home_markers

from .ignore import (
    IGNORE_FILES,
    IgnoreRule,
    builtin_exclude,
    is_ignored,
    parse_ignore_lines,
)

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class SourceFile:
    relpath: str  # posix path relative to the package dir
    path: Path  # where its bytes are read from (a link's target for symlinks)
    size: int
    executable: bool


@dataclass(frozen=True)
class Tree:
    files: tuple[SourceFile, ...]  # sorted by relpath
    credentials: tuple[str, ...]  # credential-like paths that were left out
    left_out: tuple[tuple[str, str], ...] = ()  # (path, why) of what a user may miss: secrets, .env, links
    forced: tuple[tuple[str, str], ...] = ()  # (path, --include pattern) of credential-like files packaged anyway

    @property
    def unpacked_size(self) -> int:
        """Bytes of the package's files as the training machine holds them (not compressed)."""
        return sum(f.size for f in self.files)


def check_package_dir(package_dir: Path) -> Path:
    """The package directory made absolute, links not resolved, or a :class:`PackagingError` with the fix."""
    package_dir = Path(package_dir)
    if not package_dir.exists():
        raise PackagingError(
            f"package path {package_dir} does not exist",
            "point package.path at the training package folder, e.g. trainer/",
        )
    if not package_dir.is_dir():
        raise PackagingError(
            f"package path {package_dir} is not a directory",
            "package.path is the package folder (containing __init__.py), not a file in it",
        )
    root = Path(os.path.abspath(package_dir))
    if markers := home_markers(root):  # a home folder holds logins, keys and history under names of its own
        raise PackagingError(
            f"package path {package_dir} is a home folder (it holds {', '.join(markers[:3])}): packaging it "
            "would take every file of yours, shell history and tools' logins included",
            "point package.path at the training package folder, e.g. ~/project/trainer",
        )
    if not (root / "__init__.py").is_file():
        inner = sorted(p.parent.name for p in root.glob("*/__init__.py"))
        hint = (
            f"did you mean {package_dir / inner[0]}? (packages inside: {', '.join(inner)})"
            if inner
            else f"add an empty {package_dir / '__init__.py'} to make it a Python package"
        )
        raise PackagingError(f"package path {package_dir} has no __init__.py", hint)
    if not root.name.isidentifier():
        fixed = re.sub(r"\W", "_", root.name)
        raise PackagingError(
            f"package folder name {root.name!r} ({package_dir}) is not a Python identifier,"
            " so `python -m` cannot import it",
            f"rename the folder, e.g. to {fixed!r}",
        )
    return root


def collect(package_dir: Path, *, skip: Sequence[Path] = (), include: Sequence[str] = ()) -> Tree:
    """Walk ``package_dir`` (already checked) and list what goes into the package. ``skip``: folders never packaged (an
    output folder inside); ``include``: credential-like files packaged all the same, listed in ``Tree.forced``."""
    walk = _Walk(Path(package_dir).resolve(), skip, include)
    try:
        walk.folder(walk.root, "", [])
    except OSError as e:
        raise PackagingError(
            f"cannot read {e.filename or walk.root}: {e.strerror or e}",
            "check the permissions of the package folder",
        ) from e
    files, regular = walk.files, dict(walk.files)  # links inside a linked folder are not followed again
    for link, target in walk.links:
        followed = _follow(walk.root, link, target, regular, walk.credentials)
        if not followed:
            walk.left_out.append((link, "link to an excluded file"))
        files.update(followed)
    return Tree(
        tuple(files[k] for k in sorted(files)),
        tuple(sorted(walk.credentials)),
        tuple(sorted(walk.left_out)),
        tuple(sorted(walk.forced.items())),
    )


class _Walk:
    """What :func:`collect` finds as it walks the package folder."""

    def __init__(self, root: Path, skip: Sequence[Path], include: Sequence[str]) -> None:
        self.root, self.include = root, include
        self.skipped = {Path(p).resolve() for p in skip}
        self.wanted = parse_ignore_lines(include, source="--include")
        self.files: dict[str, SourceFile] = {}
        self.links: list[tuple[str, str]] = []
        self.credentials: list[str] = []
        self.left_out: list[tuple[str, str]] = []
        self.forced: dict[str, str] = {}

    def overridden(self, child: str, is_dir: bool) -> bool:
        rule = is_ignored(self.wanted, child, is_dir)
        if rule is not None:
            self.forced[child] = rule.pattern
        return rule is not None

    def deeper(self, child: str) -> bool:  # --include names a path inside the folder ``child`` (.aws/credentials)
        return any(pattern.lstrip("!/").startswith(child + "/") for pattern in self.include)

    def folder(self, folder: Path, rel: str, rules: list[IgnoreRule], guarded: bool = False) -> None:
        """``guarded``: a credential folder entered for the paths --include names in it, and only those."""
        rules = rules + _read_rules(folder, rel)
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            category = builtin_exclude(entry.name)
            if guarded and category not in ("version control", "ignore file", "cache"):
                if self.overridden(child, entry.is_dir()):
                    category = None  # named: packaged as in any folder
                elif entry.is_dir() and self.deeper(child):
                    self.folder(Path(entry.path), child, rules, guarded=True)
                    continue
                else:
                    continue
            elif category in ("credential", "environment file") and self.overridden(child, entry.is_dir()):
                category = None
            elif category in ("credential", "environment file") and entry.is_dir() and self.deeper(child):
                self.folder(Path(entry.path), child, rules, guarded=True)
                continue
            if category:
                if category == "credential":
                    self.credentials.append(child)
                    self.left_out.append((child, "credential-like"))
                elif category == "environment file":
                    self.left_out.append((child, "environment file"))
                continue
            self.entry(entry, child, rules)

    def entry(self, entry: os.DirEntry[str], child: str, rules: list[IgnoreRule]) -> None:
        """One name the built-in exclusions let through: ignored, a link, a folder or a file."""
        root = self.root
        loop = entry.is_symlink() and _loops(entry.path)
        is_dir = not loop and entry.is_dir()  # follows links, like git's view of the work tree
        if is_ignored(rules, child, is_dir):
            return
        if loop:
            raise PackagingError(
                f"symlink loop in {root}: {_loop_chain(root, entry.path)}",
                f"remove one of these links, or add {child!r} to {root / '.cloudtrainignore'}",
            )
        _check_name(root, child)
        if entry.is_symlink():
            self.links.append((child, os.path.realpath(entry.path)))
        elif is_dir:
            if Path(entry.path).resolve() not in self.skipped:
                self.folder(Path(entry.path), child, rules)
        else:
            st = entry.stat()
            if not stat.S_ISREG(st.st_mode):
                raise PackagingError(
                    f"{root / child} is not a regular file (a socket, pipe or device)",
                    f"remove it or add {child!r} to {root / '.cloudtrainignore'}",
                )
            held = credential_in(entry.path, st.st_size)
            if held and not self.overridden(child, False):
                self.credentials.append(child)
                self.left_out.append((child, held))
                return
            self.files[child] = SourceFile(child, Path(entry.path), st.st_size, bool(st.st_mode & 0o111))


def _check_name(root: Path, rel: str) -> None:
    """Refuse a name that is not UTF-8 (stored so in the sdist, it would arrive garbled or break the install)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(rel).decode("utf-8", "backslashreplace")
        raise PackagingError(
            f"file name {root.name}/{shown} is not valid UTF-8",
            "rename it (e.g. convmv -f latin1 -t utf8), or add it to .cloudtrainignore",
        ) from None


def _loops(path: str) -> bool:
    try:
        os.stat(path)
    except OSError as e:
        return e.errno == errno.ELOOP
    return False


def _loop_chain(root: Path, path: str, limit: int = 40) -> str:
    """``a -> b -> a``: the links of a symlink loop, relative to ``root`` where they are inside it."""

    def show(p: str) -> str:
        try:
            return Path(p).relative_to(root).as_posix()
        except ValueError:
            return p

    seen: list[str] = []
    current = os.path.abspath(path)
    while current not in seen and len(seen) < limit:
        seen.append(current)
        try:
            target = os.readlink(current)
        except OSError:
            break
        current = os.path.normpath(os.path.join(os.path.dirname(current), target))
    return " -> ".join(show(p) for p in seen + [current])


def runnable_modules(package_name: str, tree: Tree) -> list[str]:
    """Dotted names that ``python -m`` can run: modules and folders with ``__main__.py``."""
    found = set()
    for f in tree.files:
        if not f.relpath.endswith(".py"):
            continue
        parts = [package_name, *f.relpath[:-3].split("/")]
        if parts[-1] == "__main__":
            parts.pop()
        elif parts[-1] == "__init__":
            continue
        if all(p.isidentifier() for p in parts):
            found.add(".".join(parts))
    return sorted(found)


def check_module(package_dir: Path, module: str) -> str:
    """Check that ``python -m module`` finds its code in the package (``trainer.task``: ``trainer/task.py`` or
    ``trainer/task/__main__.py``, not ignored); its path relative to the package's parent."""
    root = check_package_dir(package_dir)
    name = root.name
    if not _DOTTED.fullmatch(module or ""):
        dotted = re.sub(r"\.py$", "", module or "").strip("/").replace("/", ".")
        hint = f"did you mean {dotted!r}?" if _DOTTED.fullmatch(dotted) else f"e.g. '{name}.task'"
        raise PackagingError(f"module {module!r} is not a dotted Python module name", hint)
    tree = collect(root)
    available = runnable_modules(name, tree)
    listed = ", ".join(available[:12]) + (", …" if len(available) > 12 else "") or "none"
    parts = module.split(".")
    if parts[0] != name:
        raise PackagingError(
            f"module {module!r} is not in package {name!r} ({package_dir})",
            f"modules in it: {listed}",
        )
    rel = "/".join(parts[1:])
    candidates = [f"{rel}.py", f"{rel}/__main__.py"] if rel else ["__main__.py"]
    packaged = {f.relpath for f in tree.files}
    for candidate in candidates:
        if candidate in packaged:
            return f"{name}/{candidate}"
    on_disk = [c for c in candidates if (root / c).is_file()]
    if on_disk:
        raise PackagingError(
            f"module {module!r}: {root / on_disk[0]} exists but is excluded from the package",
            "remove the pattern that matches it from .gitignore / .cloudtrainignore,"
            f" or re-include it with '!{on_disk[0]}'",
        )
    import difflib  # only on the error path

    tails = {m[len(name) + 1 :]: m for m in available if m != name}
    close = [tails[t] for t in difflib.get_close_matches(".".join(parts[1:]), list(tails), n=1)] if rel else []
    hint = (f"did you mean {close[0]!r}? " if close else "") + f"modules in it: {listed}"
    raise PackagingError(f"module {module!r} not found in {package_dir}: no {' or '.join(candidates)}", hint)


def _read_rules(folder: Path, rel: str) -> list[IgnoreRule]:
    rules: list[IgnoreRule] = []
    for filename in IGNORE_FILES:
        path = folder / filename
        if path.is_file():
            source = f"{rel}/{filename}" if rel else filename
            text = path.read_text(encoding="utf-8", errors="replace")
            rules += parse_ignore_lines(text.splitlines(), base=rel, source=source)
    return rules


def _follow(
    root: Path, link: str, target: str, files: dict[str, SourceFile], credentials: list[str]
) -> dict[str, SourceFile]:
    """What the symlink at ``link`` (relative to root) contributes to the package."""
    fix = f"copy what it points to into the package, or add {link!r} to {root / '.cloudtrainignore'}"
    if not os.path.exists(target):
        raise PackagingError(f"symlink {root / link} points to {target}, which does not exist", fix)
    if os.path.commonpath([str(root), target]) != str(root):
        raise PackagingError(f"symlink {root / link} points outside the package, to {target}", fix)
    target_rel = Path(target).relative_to(root).as_posix()
    target_rel = "" if target_rel == "." else target_rel
    if os.path.isdir(target):
        if target_rel == "" or link.startswith(target_rel + "/"):
            loop = f"{link} -> {target_rel or '.'}/ -> … -> {link}"
            raise PackagingError(f"symlink {root / link} points to a folder that contains it (a loop: {loop})", fix)
        prefix = target_rel + "/"
        return {
            link + f.relpath[len(target_rel) :]: SourceFile(
                link + f.relpath[len(target_rel) :], f.path, f.size, f.executable
            )
            for f in files.values()
            if f.relpath.startswith(prefix)
        }
    if target_rel in files:
        f = files[target_rel]
        return {link: SourceFile(link, f.path, f.size, f.executable)}
    if any(builtin_exclude(part) == "credential" for part in target_rel.split("/")):
        credentials.append(link)
    return {}
