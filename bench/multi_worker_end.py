"""How often a two-worker trainer run ends with coordination-service abort lines.

    python -m bench.multi_worker_end [--runs 20] [--end trainer|grace|none|hold-chief|hold-worker] [--busy N]
                                     [--out results.json]
    python -m bench.multi_worker_end --launcher local --tensorflow 2.17 [--runs 20]

Each run starts ``python -m trainer.task`` twice on 127.0.0.1 under one TF_CONFIG
(MultiWorkerMirroredStrategy, 1 epoch of 2 steps on synthetic data) and counts the stderr
lines that say a worker found the other gone (``UNAVAILABLE``, ``StartAbort``, a heartbeat
timeout, a failed end-of-run barrier). ``--end`` picks how the workers leave:

- ``trainer`` (default): the trainer's own end (trainer/shutdown.py): a barrier, then the
  other workers end their processes at once and the chief ends its own when their ports close;
- ``grace``: the previous end, rebuilt here: the barrier, the chief waits a fixed 2 s, then
  both exit through the interpreter's normal teardown;
- ``none``: no barrier, normal teardown: each worker leaves when its own work is done;
- ``hold-chief`` / ``hold-worker``: the barrier, then the chief (the other worker) stays 12 s
  before a normal exit: the two orders that produce the lines, to show what they look like.

``--launcher local`` runs each job the way the issue's runs did instead: ``cloudtrain submit
--local`` of ``job_configs/cpu.yaml`` with ``replica_count=2`` and ``image.tensorflow`` /
``local.python`` set, so the replicas run in the environment ``--local`` builds for that image
(this checkout's trainer, the trainer's own end) and the lines counted are the ones the follower
prints. ``grace``, ``none`` and the holds replace the trainer's end inside this bench only (no setting changes it
for users). ``--busy N`` keeps N CPU-bound processes running during the runs, to measure the
end on a loaded machine (the fault showed under load). The workers run under the interpreter
that runs this script, so a run on another TensorFlow is that environment's python
(PYTHONPATH only adds this checkout)::

    <env>/bin/python -m bench.multi_worker_end --runs 20

Not part of ``python -m bench``: a run costs minutes on a busy 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.trainer.helpers import free_ports

REPO = Path(__file__).resolve().parents[1]
ABORT = re.compile(r"UNAVAILABLE|StartAbort|heartbeat timeout|end-of-run barrier", re.I)
#: ``python -m trainer.task`` with the trainer's end replaced, for every ``--end`` but ``trainer``.
_REPLACED_END = """
import sys, time, trainer.shutdown as s
barrier, chief_wait, worker_wait = s.leave_together, {wait}, {worker_wait}
def leave(strategy, cluster, **kw):
    if {barrier}:
        barrier(strategy, cluster, peer_alive=lambda address: False)
    time.sleep(chief_wait if cluster.is_chief else worker_wait)
    return True
s.leave_together, s.end_process = leave, lambda code: None
from trainer.task import main
sys.exit(main(sys.argv[1:]))
"""
ENDS = {
    "trainer": None,
    "grace": _REPLACED_END.format(wait=2.0, worker_wait=0.0, barrier=True),
    "none": _REPLACED_END.format(wait=0.0, worker_wait=0.0, barrier=False),
    # the two losing orders, on purpose: one process outlives the other by more than the 10 s heartbeat timeout
    "hold-chief": _REPLACED_END.format(wait=12.0, worker_wait=0.0, barrier=True),
    "hold-worker": _REPLACED_END.format(wait=0.0, worker_wait=12.0, barrier=True),
}
ARGS = ["--epochs", "1", "--steps-per-epoch", "2", "--data", "synthetic", "--synthetic-examples", "256", "--no-resume"]
LOCAL_ARGS = [f"{flag}={value}" for flag, value in zip(ARGS[:-1:2], ARGS[1::2], strict=True)] + [ARGS[-1]]


def one_run(workdir: Path, *, end: str = "trainer") -> dict:
    workers = [f"127.0.0.1:{p}" for p in free_ports(2)]
    started = time.monotonic()
    procs = []
    for index in range(2):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AIP_", "SM_", "TF_CONFIG", "CLUSTER_SPEC"))}
        env.update(
            PYTHONPATH=str(REPO),
            PYTHONUNBUFFERED="1",
            TF_CONFIG=json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}),
        )
        entry = ["-c", ENDS[end]] if ENDS[end] else ["-m", "trainer.task"]
        procs.append(
            subprocess.Popen(
                [sys.executable, *entry, *ARGS, "--job-dir", str(workdir / f"w{index}")],
                cwd=workdir,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outputs: list = [None, None]
    ended = [0.0, 0.0]  # when each process exited (monotonic)

    def collect(index: int) -> None:
        outputs[index] = procs[index].communicate(timeout=1800)
        ended[index] = time.monotonic()

    threads = [threading.Thread(target=collect, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    per_worker = [[line for line in err.splitlines() if ABORT.search(line)] for _, err in outputs]
    lines = per_worker[0] + per_worker[1]
    return {
        "exit_codes": [p.returncode for p in procs],
        "abort_lines": len(lines),
        "examples": lines[:4],
        "abort_lines_by_worker": [len(x) for x in per_worker],
        "chief_exit_after_worker_s": round(ended[0] - ended[1], 2),  # > 0: the chief (service host) left last
        "seconds": round(time.monotonic() - started, 1),
    }


def one_local_run(workdir: Path, *, tensorflow: str, python: str, cache: Path | None = None) -> dict:
    """One two-replica ``cloudtrain submit --local`` (run by this interpreter: cloudtrain's own)."""
    out = workdir / "run"
    cmd = [
        sys.executable,
        "-m",
        "cloudtrain",
        "submit",
        "--config",
        str(REPO / "job_configs" / "cpu.yaml"),
        "--local",
        "--set",
        f'image.tensorflow="{tensorflow}"',
        "--set",
        f'local.python="{python}"',
        "--set",
        "replica_count=2",
        "--set",
        f"args=[{', '.join(LOCAL_ARGS)}]",
        "--set",
        f"output_dir={out}",
    ]
    env = {**os.environ, "CLOUDTRAIN_CACHE_DIR": str(cache)} if cache else None
    started = time.monotonic()
    run = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    lines = [line for line in (run.stdout + run.stderr).splitlines() if ABORT.search(line)]
    status_file = out / "local-run" / "status.json"
    details = json.loads(status_file.read_text()).get("details", {}) if status_file.is_file() else {}
    return {
        "exit_codes": list((details.get("exit_codes") or {"submit": run.returncode}).values()),
        "submit_exit_code": run.returncode,
        "abort_lines": len(lines),
        "examples": lines[:4],
        "environment": details.get("environment"),
        "seconds": round(time.monotonic() - started, 1),
    }


def _tensorflow_version(python: str = sys.executable) -> str | None:
    probe = subprocess.run(
        [python, "-c", "import tensorflow as tf; print(tf.__version__)"],
        capture_output=True,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    return probe.stdout.strip().splitlines()[-1] if probe.returncode == 0 and probe.stdout.strip() else None


def _env_python(runs: list[dict]) -> list[str]:
    """The interpreter the workers ran under: this one, or the environment ``--local`` built."""
    built = next((r["environment"] for r in runs if r.get("environment")), None)
    return [str(Path(built) / "bin" / "python")] if built else []


def _busy(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--end", choices=sorted(ENDS), default="trainer", help="how the workers leave (see above)")
    parser.add_argument("--busy", type=int, default=0, metavar="N", help="CPU-bound processes kept running meanwhile")
    parser.add_argument(
        "--launcher",
        choices=("direct", "local"),
        default="direct",
        help="start the two workers here (direct) or through `cloudtrain submit --local`",
    )
    parser.add_argument("--tensorflow", default="2.17", help="image.tensorflow for --launcher local")
    parser.add_argument("--python", default="3.10", help="local.python for --launcher local")
    parser.add_argument("--cache", type=Path, help="CLOUDTRAIN_CACHE_DIR for --launcher local (its built environments)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.launcher == "local" and args.end != "trainer":
        parser.error("--launcher local runs the trainer's own end only")
    runs = []
    load_at_start = round(os.getloadavg()[0], 1)
    hogs = _busy(args.busy)
    try:
        with tempfile.TemporaryDirectory(prefix="cloudtrain-bench-mw-") as tmp:
            for i in range(args.runs):
                workdir = Path(tmp, f"run{i}")
                workdir.mkdir()
                if args.launcher == "local":
                    runs.append(
                        one_local_run(workdir, tensorflow=args.tensorflow, python=args.python, cache=args.cache)
                    )
                else:
                    runs.append(one_run(workdir, end=args.end))
                print(json.dumps({"run": i + 1, **runs[-1]}), flush=True)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    seconds = sorted(r["seconds"] for r in runs)
    summary = {
        "tensorflow": _tensorflow_version(*_env_python(runs)),
        "python": sys.version.split()[0] if args.launcher == "direct" else args.python,
        "launcher": args.launcher,
        "end": args.end,
        "busy_processes": args.busy,
        "load_average_start_end": [load_at_start, round(os.getloadavg()[0], 1)],
        "runs": len(runs),
        "runs_with_abort_lines": sum(1 for r in runs if r["abort_lines"]),
        "abort_lines": sum(r["abort_lines"] for r in runs),
        "failed_runs": sum(1 for r in runs if any(r["exit_codes"])),
        "seconds_median_min_max": [seconds[len(seconds) // 2], seconds[0], seconds[-1]] if runs else None,
        "chief_exit_after_worker_s_min_max": [
            min(r["chief_exit_after_worker_s"] for r in runs),
            max(r["chief_exit_after_worker_s"] for r in runs),
        ]
        if runs and args.launcher == "direct"
        else None,
    }
    print(json.dumps(summary), flush=True)
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "runs": runs}, indent=2) + "\n")
    return 0 if summary["abort_lines"] == 0 and summary["failed_runs"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
