"""Load the catalog's JSON files once, on first use."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).with_name("data")


@functools.cache
def load(name: str) -> dict[str, Any]:
    """``data/<name>.json`` as a dict, parsed on the first call only."""
    data: dict[str, Any] = json.loads((DATA_DIR / f"{name}.json").read_text(encoding="utf-8"))
    return data
