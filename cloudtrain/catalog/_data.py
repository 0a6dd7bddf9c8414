"""Load the catalog's JSON files once, on first use."""

from __future__ import annotations

import functools
import json
from pathlib import Path

DATA_DIR = Path(__file__).with_name("data")


@functools.cache
def load(name: str) -> dict:
    """``data/<name>.json`` as a dict, parsed on the first call only."""
    return json.loads((DATA_DIR / f"{name}.json").read_text(encoding="utf-8"))
