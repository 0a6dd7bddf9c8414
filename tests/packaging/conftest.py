from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "packages"


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    """A fresh copy of tests/packages/mini_trainer, safe to modify."""
    dst = tmp_path / "src" / "mini_trainer"
    shutil.copytree(FIXTURES / "mini_trainer", dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst
