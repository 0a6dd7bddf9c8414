"""The tail every page generator in tools/ shares: write the page, or with ``--check`` exit 1 when the
committed page differs from a fresh render (``make docs`` writes; the tests and CI check)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def write_or_check(
    argv: list[str] | None,
    *,
    doc: str | None,
    page: Path,
    render: Callable[[], str],
    stale: str,
    check_help: str = "exit 1 if the committed page is stale",
) -> int:
    """Parse ``argv`` (``--check``), render, then write ``page`` or compare it; ``doc``: the tool's docstring,
    whose first line describes it; ``stale``: the line printed (stderr) when the check finds it stale."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help=check_help)
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not page.exists() or page.read_text() != text:
            print(stale, file=sys.stderr)
            return 1
        return 0
    page.write_text(text)
    return 0
