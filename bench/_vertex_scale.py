"""Vertex log following at 1, 8 and 60 replicas, to sit beside the SageMaker bench's instance counts.

``bench/vertex_logs_bench.py`` measures a busy and an idle 2-replica job; this runs its own
``run()`` (same fake, virtual clock, followers and figures) on jobs shaped like the
SageMaker bench's: one line a second per replica, for 5 minutes (30 s with ``--quick``).

    uv run --frozen python -m bench._vertex_scale [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from bench.vertex_logs_bench import Scenario, run

REPLICAS = (1, 8, 60)
FOLLOWERS = ("cloudtrain", "gcloud-60s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 s jobs instead of 5 minutes")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    minutes = 0.5 if args.quick else 5.0
    results = []
    for n in REPLICAS:
        scenario = Scenario(f"{n} replicas", replicas=n, lines_per_second=1.0, minutes=minutes)
        for follower in FOLLOWERS:
            r = run(scenario, follower)
            results.append({"replicas": n, **asdict(r)})
            print(f"{n:>3} replicas  {follower:<11} lines {r.lines:>6} lost {r.lost:>5} dup {r.duplicates:>3} "
                  f"ooo {r.out_of_order:>4}  delay p50 {r.delay_median_s:5.1f} p95 {r.delay_p95_s:5.1f} "
                  f"max {r.delay_max_s:5.1f} s  {r.requests_per_minute:6.1f} reads/min", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"minutes": minutes, "lines_per_second": 1.0, "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
