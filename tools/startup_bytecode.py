"""Compile, at install, the bytecode of what the CLI imports when it starts: cloudtrain and its light
dependencies. Not TensorFlow's and the cloud SDKs' (~19,000 files): compiling everything
(``UV_COMPILE_BYTECODE=1``) made the first ``make install`` spend 50 s on files the CLI never
imports when it starts, which Python compiles the first time something does import them.

``bench/cli_bench.py`` checks the list: the first dry-run after this step stays within 1.2× of a
warm one. ``python tools/startup_bytecode.py`` (``make install`` runs it with the project's venv).
"""

from __future__ import annotations

import compileall
import importlib.util
import sys
import time

#: Top-level packages a dry-run, ``validate`` or ``--help`` imports (bench.cli_bench.imported_sources lists
#: them).
STARTUP = (
    "cloudtrain",
    "click",
    "rich",
    "yaml",
    "_distutils_hack",
)


def compile_startup(names=STARTUP) -> int:
    """Compile each package (or module) in ``names`` that is installed, and the single-file modules at
    the top of site-packages (the editable install's finder, which every start imports); returns how
    many packages were found."""
    import site

    for folder in site.getsitepackages():
        compileall.compile_dir(folder, maxlevels=0, quiet=1)
    found = 0
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None:
            continue
        found += 1
        if spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                compileall.compile_dir(folder, quiet=1)
        elif spec.origin and spec.origin.endswith(".py"):
            compileall.compile_file(spec.origin, quiet=1)
    return found


if __name__ == "__main__":
    start = time.perf_counter()
    count = compile_startup()
    print(
        f"bytecode compiled for the CLI's start-up ({count} packages) in {time.perf_counter() - start:.1f} s;"
        " the rest compiles when first imported",
        file=sys.stderr,
    )
