"""What a preemption costs with checkpoint-on-notice, against per-epoch checkpoints.

For 1 worker and 2 workers (MultiWorkerMirroredStrategy over 127.0.0.1), each repeat
starts the real trainer (digits, ``--steps-per-execution auto``, so a call lasts about
``--call-seconds``), waits for the first epoch line, sleeps a random part of an epoch,
sends SIGTERM (to one worker chosen at random) and measures:

* **SIGTERM → checkpoint saved**: from the signal to the ``saved_at`` time of the
  chief's ``preempted`` line (the handler acts between calls: at most about two calls);
* **steps redone after the restart**: 0 with the notice save (the restart resumes at the
  saved step, checked by restarting once per worker count); with per-epoch checkpoints
  the same notice would restart from the epoch's start: the steps of the stopped
  epoch already done (``saved step mod steps per epoch``), up to a whole epoch.

Usage::

    python -m bench.preemption_bench [--quick] [--repeats N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIP_", "SM_", "TF_CONFIG", "CLUSTER_SPEC"))}
    env.update(PYTHONPATH=str(REPO), TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1", **extra)
    return env


def _ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _start(workers: int, args: list[str], job: Path) -> list[subprocess.Popen]:
    hosts = [f"127.0.0.1:{p}" for p in _ports(workers)] if workers > 1 else []
    procs = []
    for index in range(workers):
        extra = {}
        if hosts:
            extra["TF_CONFIG"] = json.dumps({"cluster": {"worker": hosts}, "task": {"type": "worker", "index": index}})
        procs.append(subprocess.Popen([sys.executable, "-m", "trainer.task", *args, "--job-dir", str(job)],
                                      cwd=job.parent, env=_env(**extra), stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True, start_new_session=True))  # fmt: skip
    return procs


def _events(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith('{"event"')]


def one_preemption(workers: int, args: list[str], job: Path, rng: random.Random) -> dict:
    procs = _start(workers, args, job)
    try:
        lines = []
        for line in procs[0].stdout:
            lines.append(line)
            if line.startswith('{"event": "epoch", "epoch": 1,'):
                epoch = json.loads(line)
                time.sleep(rng.uniform(0.0, epoch["train_time_s"]))
                sent = time.time()
                rng.choice(procs).send_signal(signal.SIGTERM)
                break
        out = "".join(lines) + procs[0].communicate(timeout=300)[0]
        codes = [p.wait(timeout=60) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
    events = _events(out)
    saved = next(e for e in events if e["event"] == "preempted")
    spe = next(e for e in events if e["event"] == "plan")["batch"]["steps_per_epoch"]
    return {"exit_codes": codes, "step": saved["step"], "steps_per_epoch": spe,
            "sigterm_to_saved_s": saved["saved_at"] - sent, "per_epoch_redone": saved["step"] % spe,
            "steps_per_call": next(e for e in events if e["event"] == "plan")["steps_per_execution"]}


def resume_step(workers: int, args: list[str], job: Path) -> int:
    procs = _start(workers, args + ["--plan-only"], job)
    out = procs[0].communicate(timeout=300)[0]
    for p in procs:
        p.wait(timeout=60)
    return next(e for e in _events(out) if e["event"] == "plan")["resume_step"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="one repeat per worker count")
    p.add_argument("--repeats", type=int, help="preemptions per worker count (default 5, quick 1)")
    p.add_argument("--json", help="also write the results here")
    a = p.parse_args(argv)
    repeats = a.repeats or (1 if a.quick else 5)
    rng = random.Random()
    work = Path(tempfile.mkdtemp(prefix="preemption-bench-"))
    args = ["--data", "synthetic", "--synthetic-examples", "4096", "--batch-size", "32", "--epochs", "20"]
    rows = []
    print(f"preemption benchmark: {os.cpu_count()} CPUs, {repeats} preemption(s) per worker count", flush=True)
    for workers in (1, 2):
        runs = []
        for i in range(repeats):
            job = work / f"w{workers}-{i}" / "job"
            job.parent.mkdir(parents=True)
            run = one_preemption(workers, args, job, rng)
            if i == 0:
                run["resume_step"] = resume_step(workers, args, job)
            runs.append(run)
            print(f"  {workers} worker(s) #{i + 1}: {run}", flush=True)
        latency = [r["sigterm_to_saved_s"] for r in runs]
        redone = [r["per_epoch_redone"] for r in runs]
        row = {
            "workers": workers,
            "steps_per_epoch": runs[0]["steps_per_epoch"],
            "exit_codes_ok": all(c == 5 for r in runs for c in r["exit_codes"]),
            "sigterm_to_saved_s_median": statistics.median(latency),
            "sigterm_to_saved_s_max": max(latency),
            "steps_redone_notice": runs[0]["step"] - runs[0]["resume_step"],
            "steps_redone_per_epoch_median": statistics.median(redone),
            "steps_redone_per_epoch_max_possible": runs[0]["steps_per_epoch"],
            "runs": runs,
        }
        rows.append(row)
    print("\n  workers | SIGTERM→saved median (max) | steps redone: notice | per-epoch ckpt median (max)")
    for r in rows:
        print(f"  {r['workers']:>7} | {r['sigterm_to_saved_s_median']:>6.2f} s ({r['sigterm_to_saved_s_max']:.2f} s)"
              f"{'':>10}| {r['steps_redone_notice']:>20} | {r['steps_redone_per_epoch_median']:>6g} "
              f"({r['steps_redone_per_epoch_max_possible']})")
    if a.json:
        Path(a.json).write_text(json.dumps({"repeats": repeats, "rows": rows}, indent=2) + "\n")
    return 0 if all(r["exit_codes_ok"] and r["steps_redone_notice"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
