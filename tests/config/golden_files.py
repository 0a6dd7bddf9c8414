"""Golden files for the config translations: readable JSON a reviewer can diff.

Regenerate after an intended change with
``CLOUDTRAIN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/config`` and read the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"


def assert_golden(name: str, value: object) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if os.environ.get("CLOUDTRAIN_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}; see tests/config/golden_files.py"
    assert text == path.read_text(encoding="utf-8"), (
        f"translation changed; see tests/config/golden_files.py ({path.name})"
    )
