"""CLI latency: `cloudtrain --help`, `validate`, `submit --dry-run`, next to the import cost
of what a user would otherwise script with (the Vertex SDK, the SageMaker SDK's core).

Each command runs in a fresh process (what a user waits for); the median of N runs.
    python -m bench.cli_bench [--runs 7] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "cloudtrain"]
CASES = {
    "cloudtrain --help": CLI + ["--help"],
    "cloudtrain validate gpu4.yaml": CLI + ["validate", "job_configs/gpu4.yaml"],
    "cloudtrain submit --dry-run (vertex)": CLI + ["submit", "--config", "job_configs/gpu4.yaml", "--dry-run"],
    "cloudtrain submit --dry-run (sagemaker)": CLI + ["submit", "--config", "job_configs/sagemaker-gpu4.yaml", "--dry-run"],
    "python -c 'import google.cloud.aiplatform'": [sys.executable, "-c", "import google.cloud.aiplatform"],
    "python -c 'from google.cloud import aiplatform_v1'": [sys.executable, "-c", "from google.cloud import aiplatform_v1"],
    "python -c 'from sagemaker.core import image_uris'": [sys.executable, "-c", "from sagemaker.core import image_uris"],
    "python -c 'pass' (interpreter start)": [sys.executable, "-c", "pass"],
}


def time_command(argv: list[str], runs: int, env: dict[str, str]) -> dict[str, float]:
    samples = []
    subprocess.run(argv, cwd=REPO, env=env, capture_output=True, check=True)  # warm the page cache
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=REPO, env=env, capture_output=True, check=True)
        samples.append(time.perf_counter() - start)
    return {"median_s": statistics.median(samples), "min_s": min(samples), "max_s": max(samples), "runs": runs}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 runs, cloudtrain commands only")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    runs = 3 if args.quick else max(5, args.runs)
    cases = {k: v for k, v in CASES.items() if not args.quick or k.startswith("cloudtrain")}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": cache}
        results = {name: time_command(cmd, runs, env) for name, cmd in cases.items()}
    for name, r in results.items():
        print(f"{name:<48} median {r['median_s'] * 1000:7.0f} ms  (min {r['min_s'] * 1000:.0f}, max {r['max_s'] * 1000:.0f}, n={r['runs']})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
