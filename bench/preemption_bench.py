"""What a preemption costs with checkpoint-on-notice, against per-epoch checkpoints.

For 1 worker and 2 workers (MultiWorkerMirroredStrategy over 127.0.0.1), each repeat
starts the real trainer (synthetic 8x8 images, 384 steps per epoch, ``--steps-per-execution
auto``, so a call lasts about ``--call-seconds``), waits for the first epoch line, sleeps a
random part of an epoch, sends SIGTERM (to one worker chosen at random) and measures:

* **SIGTERM → checkpoint saved**: from the signal to the ``saved_at`` time of the
  chief's ``preempted`` line (the handler acts between calls: at most about two calls);
* **steps redone after the restart**: the saved step minus the step a restart resumes at
  (the restart's plan, ``--plan-only``, after every preemption): 0 when the notice save
  works; with per-epoch checkpoints the same notice would restart from the epoch's start:
  the steps of the stopped epoch already done (``saved step mod steps per epoch``), up to a
  whole epoch.

Every figure is the median of the repeats with its min–max; the two ways of
checkpointing get a verdict on steps redone (bench/_stats.py). Exit 1 when a worker did
not exit 5 or a restart would redo steps.

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
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "trainer.task", *args, "--job-dir", str(job)],
                cwd=job.parent,
                env=_env(**extra),
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                start_new_session=True,
            )
        )
    return procs


def _events(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith('{"event"')]


def one_preemption(workers: int, args: list[str], job: Path, rng: random.Random) -> dict:
    procs = _start(workers, args, job)
    try:
        lines = []
        chief_out = procs[0].stdout
        assert chief_out is not None  # started with stdout=PIPE
        for line in chief_out:
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
    return {
        "exit_codes": codes,
        "step": saved["step"],
        "steps_per_epoch": spe,
        "sigterm_to_saved_s": saved["saved_at"] - sent,
        "per_epoch_redone": saved["step"] % spe,
        "steps_per_call": saved.get("steps_per_call"),
    }


def resume_step(workers: int, args: list[str], job: Path) -> int:
    procs = _start(workers, args + ["--plan-only"], job)
    out = procs[0].communicate(timeout=300)[0]
    for p in procs:
        p.wait(timeout=60)
    return next(e for e in _events(out) if e["event"] == "plan")["resume_step"]


def trainer_args(examples: int) -> list[str]:
    """12288 examples: 384 steps per epoch of a few seconds on one worker, so a notice lands
    mid-epoch, several calls in; 20 epochs, so the run is still training when it comes."""
    return [
        "--data",
        "synthetic",
        "--input-shape",
        "8,8,1",
        "--synthetic-examples",
        str(examples),
        "--batch-size",
        "32",
        "--epochs",
        "20",
    ]


def summarize(workers: int, runs: list[dict]) -> dict:
    """One row: every figure as median with min–max (bench._stats), and the verdict of notice
    saves against per-epoch checkpoints on steps redone."""
    from bench._stats import spread, verdict

    redone = [float(r["steps_redone"]) for r in runs]
    per_epoch = [float(r["per_epoch_redone"]) for r in runs]
    return {
        "workers": workers,
        "steps_per_epoch": runs[0]["steps_per_epoch"],
        "steps_per_call": spread([float(r["steps_per_call"] or 0) for r in runs]),
        "exit_codes_ok": all(c == 5 for r in runs for c in r["exit_codes"]),
        "sigterm_to_saved_s": spread([r["sigterm_to_saved_s"] for r in runs]),
        "steps_redone_notice": spread(redone),
        "steps_redone_per_epoch": spread(per_epoch),
        "verdict_steps_redone": verdict(redone, per_epoch, "more steps redone", "fewer steps redone"),
        "runs": runs,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="one preemption per worker count, smaller data")
    p.add_argument("--repeats", type=int, help="preemptions per worker count (default 3, quick 1)")
    p.add_argument("--json", help="also write the results here")
    a = p.parse_args(argv)
    repeats = a.repeats or (1 if a.quick else 3)
    rng = random.Random()
    work = Path(tempfile.mkdtemp(prefix="preemption-bench-"))
    args = trainer_args(2048 if a.quick else 12288)
    rows = []
    print(f"preemption benchmark: {os.cpu_count()} CPUs, {repeats} preemption(s) per worker count", flush=True)
    for workers in (1, 2):
        runs = []
        for i in range(repeats):
            job = work / f"w{workers}-{i}" / "job"
            job.parent.mkdir(parents=True)
            run = one_preemption(workers, args, job, rng)
            run["resume_step"] = resume_step(workers, args, job)
            run["steps_redone"] = run["step"] - run["resume_step"]
            runs.append(run)
            print(f"  {workers} worker(s) #{i + 1}: {run}", flush=True)
        rows.append(summarize(workers, runs))
    print("\n  workers | SIGTERM→saved s, median (min–max) | steps redone: notice | per-epoch checkpoints | verdict")
    for r in rows:
        t, n, e = r["sigterm_to_saved_s"], r["steps_redone_notice"], r["steps_redone_per_epoch"]
        print(
            f"  {r['workers']:>7} | {t['median']:.2f} ({t['min']:.2f}–{t['max']:.2f}) | {n['median']:g} "
            f"({n['min']:g}–{n['max']:g}) | {e['median']:g} ({e['min']:g}–{e['max']:g}) of {r['steps_per_epoch']} "
            f"| {r['verdict_steps_redone']}"
        )
    if a.json:
        Path(a.json).write_text(json.dumps({"repeats": repeats, "args": args, "rows": rows}, indent=2) + "\n")
    return 0 if all(r["exit_codes_ok"] and r["steps_redone_notice"]["max"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
