"""``status JOB`` against a long history: the one-job lookup must not scan the whole file.

Writes a history of N records (default 200,000, as ``cloudtrain submit`` writes them; every
tenth record is a later state line of an earlier job) into a temp cache, then times:

* ``find`` in-process: :func:`cloudtrain.history.find` (backwards from the end) for the
  newest job and for the oldest (worst case: the whole file is read, only its lines are
  parsed), next to the full forward scan it replaced (``records()`` then filter);
* ``cloudtrain status JOB -o json`` end to end in a fresh process, for a local run recorded
  at the end of that history, next to the same command with a history of one record.

Each row: the median of ``--repeats`` runs and the spread (min–max).
    python -m bench.status_lookup [--records 200000] [--repeats 7] [--json PATH] [--no-cli]
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
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STATUS = {
    "job_id": "target",
    "name": "",
    "state": "SUCCEEDED",
    "native_state": "succeeded",
    "message": None,
    "created": "2025-01-01T00:00:00+00:00",
    "ended": None,
    "details": {"replicas": ["worker-0"]},
}


def write_history(path: Path, records: int, target_name: str) -> None:
    """``records`` lines as history.record writes them; the first is job-0, the last the local run ``target``."""
    with open(path, "w", encoding="utf-8") as f:
        for n in range(records - 1):
            job = n if n % 10 else max(n - 5, 0)
            f.write(
                json.dumps(
                    {
                        "job_id": f"job-{job}",
                        "name": f"projects/p/locations/us-central1/customJobs/{job}",
                        "backend": "vertex",
                        "region": "us-central1",
                        "project": "p",
                        "config": "gpu4.yaml",
                        "kind": "job",
                        "created": "2025-01-01T00:00:00+00:00",
                        "state": "SUCCEEDED" if n % 10 == 0 else None,
                    }
                )
                + "\n"
            )
        f.write(
            json.dumps(
                {
                    "job_id": "target",
                    "name": target_name,
                    "backend": "local",
                    "region": "local",
                    "project": None,
                    "config": None,
                    "kind": "job",
                    "created": None,
                    "state": None,
                }
            )
            + "\n"
        )


def timed(fn: Callable[[], object], repeats: int) -> dict[str, float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times), "runs": repeats}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-cli", action="store_true", help="only the in-process rows (no CLI dependencies)")
    args = parser.parse_args(argv)
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cache, run = Path(tmp, "cache"), Path(tmp, "runs", "target")
        cache.mkdir()
        (run / "local-run").mkdir(parents=True)
        (run / "local-run" / "status.json").write_text(json.dumps({**STATUS, "name": str(run)}))
        os.environ["CLOUDTRAIN_CACHE_DIR"] = str(cache)
        from cloudtrain import history

        write_history(history.history_file(), args.records, str(run))
        size = history.history_file().stat().st_size
        full = lambda job: [e for e in history.records() if job in (e.job_id, e.name)][-1]  # noqa: E731
        assert history.find("target") == full("target") and history.find("job-0") == full("job-0")
        rows["find, newest job"] = timed(lambda: history.find("target"), args.repeats)
        rows["find, oldest job (worst case)"] = timed(lambda: history.find("job-0"), args.repeats)
        rows["full scan (before), any job"] = timed(lambda: full("target"), max(3, args.repeats // 2))
        if args.no_cli:
            return _report(args, size, rows)
        cli = [sys.executable, "-m", "cloudtrain", "status", "target", "-o", "json"]
        env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(cache)}
        run_cli = lambda: subprocess.run(cli, env=env, cwd=REPO, check=True, capture_output=True)  # noqa: E731
        rows[f"cloudtrain status JOB, {args.records:,} records"] = timed(run_cli, args.repeats)
        history.history_file().write_text(history.history_file().read_text().splitlines()[-1] + "\n")
        rows["cloudtrain status JOB, 1 record"] = timed(run_cli, args.repeats)
    return _report(args, size, rows)


def _report(args: argparse.Namespace, size: int, rows: dict[str, dict[str, float]]) -> int:
    print(f"history: {args.records:,} records, {size / 1e6:.1f} MB")
    for name, row in rows.items():
        print(
            f"{name:<45} median {row['median_s'] * 1000:8.1f} ms  (min {row['min_s'] * 1000:.1f}, "
            f"max {row['max_s'] * 1000:.1f}, n={row['runs']})"
        )
    if args.json:
        args.json.write_text(json.dumps({"records": args.records, "bytes": size, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
