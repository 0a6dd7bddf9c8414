"""Write the Python API reference, docs/reference/python-api/, from cloudtrain.api's docstrings with pdoc.

    python tools/api_reference.py            # rewrite the reference (``make docs``)
    python tools/api_reference.py --check    # exit 1 when the committed reference is stale

pdoc renders what ``cloudtrain.api.__all__`` names (the functions of the API and the types they take
and return), their signatures and docstrings, as HTML: no search index, no source listing, so the
output is small and the same on every machine. tests/docs/test_api_reference.py fails when the
committed files differ from a fresh render.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a script: the cloudtrain beside it
OUT = REPO / "docs" / "reference" / "python-api"
MODULE = "cloudtrain.api"


def render(folder: Path) -> dict[str, str]:
    """Render the reference into ``folder``; ``{relative path: text}`` of what it wrote."""
    import pdoc
    import pdoc.render

    pdoc.render.configure(docformat="restructuredtext", search=False, show_source=False)
    pdoc.pdoc(MODULE, output_directory=folder)
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def committed() -> dict[str, str]:
    return {p.relative_to(OUT).as_posix(): p.read_text() for p in sorted(OUT.rglob("*")) if p.is_file()}


def fresh() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as scratch:
        return render(Path(scratch))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed reference is stale")
    args = parser.parse_args(argv)
    files = fresh()
    if args.check:
        if committed() != files:
            print(f"{OUT.relative_to(REPO)} is stale: run `make docs` and commit it", file=sys.stderr)
            return 1
        return 0
    for old in OUT.rglob("*"):
        if old.is_file() and old.relative_to(OUT).as_posix() not in files:
            old.unlink()
    for name, text in files.items():
        (OUT / name).parent.mkdir(parents=True, exist_ok=True)
        (OUT / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
