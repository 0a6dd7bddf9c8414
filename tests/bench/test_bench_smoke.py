"""The CI smoke run: ``python -m bench --quick`` writes the report and the plot, each section with rows.

The trainer bench (~160 s of TensorFlow processes in --quick on 2 cores) and the Vertex SDK
packager (~30 s, nearly all of it importing google.cloud.aiplatform) are left out with --only
to keep this near two minutes; tests/trainer covers the trainer, and `make bench-smoke` runs all.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SMOKE = "cli,packaging,vertex_logs,vertex_scale,sagemaker_logs"


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(600)
def test_quick_bench_run_writes_report_and_plot(tmp_path):
    done = subprocess.run([sys.executable, "-m", "bench", "--quick", "--out", str(tmp_path), "--only", SMOKE],
                          cwd=REPO, capture_output=True, text=True, timeout=590)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    md = (tmp_path / "benchmarks.md").read_text()
    assert (tmp_path / "benchmarks.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "raw" / "results.json").exists()
    sections = dict(part.split("\n", 1) for part in md.split("\n## ")[1:])
    assert list(sections) == ["1. CLI latency", "2. Packaging", "3. Trainer", "4. Logs"]
    assert "| `cloudtrain --help` |" in sections["1. CLI latency"]
    assert "| cloudtrain (in-process) |" in sections["2. Packaging"]
    assert "| 1 → 4 GPUs (MirroredStrategy) | 21 s → 9 s" in sections["3. Trainer"]
    for n in (1, 8, 60):
        assert f"\n| {n} | " in sections["4. Logs"]
    assert "| busy | cloudtrain → Vertex |" in sections["4. Logs"]
    assert "**failed**" not in md and "**timeout**" not in md
