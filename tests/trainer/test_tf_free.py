"""The parts the CLI and the tests use without TensorFlow must not import it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PURE = [
    "trainer",
    "trainer.env",
    "trainer.cluster",
    "trainer.precision",
    "trainer.plan",
    "trainer.schedule",
    "trainer.data_spec",
    "trainer.events",
    "trainer.errors",
    "trainer.hardware",
    "trainer.strategy",
    "trainer.cli",
    "trainer.runtime",
    "trainer.task",
    "trainer.benchmark",
    "trainer.preemption",
    "trainer.shutdown",
    "trainer.tpu",
]


def _python(code: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=120
    )


def test_pure_modules_do_not_import_tensorflow():
    code = (
        "import importlib, sys\n"
        f"for m in {PURE!r}: importlib.import_module(m)\n"
        "import trainer.cli; trainer.cli.parse_args([], {})\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras')))\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_help_needs_no_tensorflow():
    code = (
        "import sys\nfrom trainer import task\n"
        "try:\n    task.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('TF' if 'tensorflow' in sys.modules else 'no TF')\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert "--cpu-devices" in result.stdout and "--benchmark" in result.stdout
    assert result.stdout.strip().endswith("no TF")


def test_user_errors_are_one_error_line_without_traceback():
    code = "import sys\nfrom trainer import task\nsys.exit(task.main(['--epochs', '0']))\n"
    result = _python(code)
    assert result.returncode == 2
    assert result.stderr.strip() == "ERROR: --epochs must be >= 1, got 0"
