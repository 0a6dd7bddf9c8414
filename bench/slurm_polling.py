"""Controller calls a Slurm watcher makes, counted on the real test cluster (tests/slurm/cluster.py).

Each Slurm client command cloudtrain runs (``scontrol``, ``squeue``, ``sacct``, ``sinfo``, ``sbatch``,
``scancel``) is wrapped by a shim on ``PATH`` that appends its name to a count file and runs the real
command: what the controller sees, with nothing mocked. Two rows:

* ``logs JOB --follow`` of one running job for ``--seconds`` (the job's own batch script is not
  counted: its PATH is its own), as calls per hour;
* ``cloudtrain list`` with 20 running Slurm jobs in history, calls per invocation (and per hour for a
  ``watch -n 60 cloudtrain list``).

    python -m bench.slurm_polling [--seconds 120] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = ("scontrol", "squeue", "sacct", "sinfo", "sbatch", "scancel")
SHIM = '#!/bin/sh\necho {name} >> "$CT_COUNT_FILE"\nexec {real} "$@"\n'


def shims(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in COMMANDS:
        real = shutil.which(name)
        if real is None:
            continue
        path = folder / name
        path.write_text(SHIM.format(name=name, real=real))
        path.chmod(0o755)
    return folder


def counted(env: dict[str, str], count_file: Path) -> Counter:
    return Counter(count_file.read_text().split()) if count_file.exists() else Counter()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=120.0, help="how long the follower watches")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from tests.slurm.cluster import slurm_cluster

    with tempfile.TemporaryDirectory(prefix="ct-bench-slurm-") as tmp:
        root = Path(tmp)
        with slurm_cluster(root / "cluster") as cluster:
            base = {
                **os.environ,
                **cluster.env(),
                "CLOUDTRAIN_CACHE_DIR": str(root / "cache"),
                "PYTHONPATH": str(REPO),
            }
            shimmed = {**base, "PATH": f"{shims(root / 'shims')}:{os.environ['PATH']}"}
            workdir = root / "workdir"
            run = workdir / "runs" / "bench-run"
            (run / "slurm").mkdir(parents=True)
            (workdir / "jobs").mkdir()
            ids = []
            for _ in range(20):  # 20 running jobs, as a submit leaves them: history line, run index, run folder
                job_id = cluster.run(
                    "sbatch",
                    "--parsable",
                    "-N1",
                    "--oversubscribe",
                    f"--output={run}/slurm/batch-%j.log",
                    "--wrap",
                    "sleep 3600",
                ).stdout.strip()
                ids.append(job_id)
                (workdir / "jobs" / job_id).write_text(str(run))
            history = root / "cache" / "jobs.jsonl"
            history.parent.mkdir(parents=True, exist_ok=True)
            with open(history, "w") as f:
                for job_id in ids:
                    f.write(
                        json.dumps(
                            {
                                "job_id": job_id,
                                "name": f"bench-{job_id}",
                                "backend": "slurm",
                                "region": "local",
                                "project": str(workdir),
                                "config": "",
                                "created": "2026-01-01T00:00:00+00:00",
                                "kind": "job",
                            }
                        )
                        + "\n"
                    )
            # one watcher following one job for --seconds
            count = root / "follow.count"
            follower = subprocess.Popen(
                [sys.executable, "-m", "cloudtrain", "logs", ids[0], "--follow"],
                env={**shimmed, "CT_COUNT_FILE": str(count)},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=REPO,
            )
            time.sleep(args.seconds)
            follower.terminate()
            follower.wait(timeout=30)
            follow = counted(shimmed, count)
            # list of 20
            count = root / "list.count"
            listed = subprocess.run(
                [sys.executable, "-m", "cloudtrain", "list", "-o", "json"],
                env={**shimmed, "CT_COUNT_FILE": str(count)},
                capture_output=True,
                text=True,
                cwd=REPO,
            )
            states = [j["state"] for j in json.loads(listed.stdout)]
            listing = counted(shimmed, count)
            cluster.run("scancel", *ids, check=False)
    rows = {
        "follow_seconds": args.seconds,
        "follow_calls": dict(follow),
        "follow_calls_per_hour": round(sum(follow.values()) * 3600 / args.seconds),
        "list_jobs": len(states),
        "list_states": dict(Counter(states)),
        "list_calls": dict(listing),
        "list_calls_per_hour_every_minute": sum(listing.values()) * 60,
    }
    print(json.dumps(rows, indent=2))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
