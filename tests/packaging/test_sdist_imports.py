"""Packaging is standard library only: no cloud SDK, no TensorFlow, no setuptools or pip."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "packages" / "mini_trainer"

PROBE = """
import sys, tempfile
before = set(sys.modules)  # the interpreter's own start-up (.pth files) is not ours
from cloudtrain.packaging import build_sdist, check_module
with tempfile.TemporaryDirectory() as out:
    build_sdist(sys.argv[1], out)
    check_module(sys.argv[1], "mini_trainer.task")
heavy = ("google", "boto3", "botocore", "sagemaker", "tensorflow", "setuptools", "pip", "build", "packaging")
print(sorted({m.split(".")[0] for m in set(sys.modules) - before} & set(heavy)))
"""


def test_building_imports_no_sdk_tensorflow_or_build_tool():
    out = subprocess.run([sys.executable, "-c", PROBE, str(FIXTURE)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[]\n"
