"""How often a two-worker trainer run ends with coordination-service abort lines.

    python -m bench.multi_worker_end [--runs 20] [--out results.json]

Each run starts ``python -m trainer.task`` twice on 127.0.0.1 under one TF_CONFIG
(MultiWorkerMirroredStrategy, 1 epoch of 2 steps on synthetic data) and counts the stderr
lines that say a worker found the other gone (``UNAVAILABLE``, ``StartAbort``, a failed
end-of-run barrier). The trainer's end-of-run barrier (trainer/shutdown.py) is meant to
keep that at 0. Not part of ``python -m bench``: a run costs minutes on a busy 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ABORT = re.compile(r"UNAVAILABLE|StartAbort|end-of-run barrier", re.I)
ARGS = ["--epochs", "1", "--steps-per-epoch", "2", "--data", "synthetic", "--synthetic-examples", "256", "--no-resume"]


def _ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def one_run(workdir: Path) -> dict:
    workers = [f"127.0.0.1:{p}" for p in _ports(2)]
    started = time.monotonic()
    procs = []
    for index in range(2):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AIP_", "SM_", "TF_CONFIG", "CLUSTER_SPEC"))}
        env.update(PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1",
                   TF_CONFIG=json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}))
        procs.append(subprocess.Popen([sys.executable, "-m", "trainer.task", *ARGS, "--job-dir", str(workdir / f"w{index}")],
                                      cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))  # fmt: skip
    outputs = [p.communicate(timeout=1800) for p in procs]
    lines = [line for _, err in outputs for line in err.splitlines() if ABORT.search(line)]
    return {"exit_codes": [p.returncode for p in procs], "abort_lines": len(lines), "examples": lines[:4],
            "seconds": round(time.monotonic() - started, 1)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory(prefix="cloudtrain-bench-mw-") as tmp:
        for i in range(args.runs):
            workdir = Path(tmp, f"run{i}")
            workdir.mkdir()
            runs.append(one_run(workdir))
            print(json.dumps({"run": i + 1, **runs[-1]}), flush=True)
    summary = {
        "runs": len(runs),
        "runs_with_abort_lines": sum(1 for r in runs if r["abort_lines"]),
        "abort_lines": sum(r["abort_lines"] for r in runs),
        "failed_runs": sum(1 for r in runs if any(r["exit_codes"])),
        "median_seconds": sorted(r["seconds"] for r in runs)[len(runs) // 2] if runs else None,
    }
    print(json.dumps(summary), flush=True)
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "runs": runs}, indent=2) + "\n")
    return 0 if summary["abort_lines"] == 0 and summary["failed_runs"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
