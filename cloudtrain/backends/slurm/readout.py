"""What a run folder on the cluster says of its job: one process, one JSON line (over one ssh session).

``python3 readout.py RUN``: the latest run's batch status, each task's ``task-<T>.json``, the time-limit warning, a
cancel cloudtrain asked for, why Slurm stopped the batch shell (``slurm-state``: the controller's line and the down
nodes when it got SIGTERM), a watcher's ``outcome.json``, failed tasks' last lines and the mask (``secrets.json``).
Standard library only, Python >= 3.10."""

import json
import os
import sys
from typing import Any

LAST_LINES = 5
TAIL_BYTES = 4096


def read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def last_lines(path: str) -> list[str]:
    """The last lines of a task's log, a last line without a newline included."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - TAIL_BYTES))
            data = f.read()
    except OSError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    if size > TAIL_BYTES and lines:
        lines = lines[1:]  # the first may be cut
    return [line for line in lines if line.strip()][-LAST_LINES:]


def main(run: str) -> None:
    folder = os.path.join(run, "slurm")
    out: dict[str, Any] = {"known": os.path.isdir(folder)}
    runs = sorted(int(n[1:]) for n in os.listdir(folder) if n[:1] == "r" and n[1:].isdigit()) if out["known"] else []
    out["restart"] = runs[-1] if runs else 0
    last = os.path.join(folder, f"r{out['restart']}")
    b = read(os.path.join(last, "batch.exit"))
    out["batch_exit"] = int(b) if b and b.strip().lstrip("-").isdigit() else None
    names = sorted(os.listdir(last)) if os.path.isdir(last) else []
    records = [n for n in names if n.startswith("task-") and n.endswith(".json")]
    tasks = [json.loads(read(os.path.join(last, n)) or "null") for n in records]
    out["tasks"] = [t for t in tasks if t]
    for t in out["tasks"]:
        if t.get("exit") not in (0, None):
            t["last_lines"] = last_lines(os.path.join(last, f"task-{t['task']}.log"))
    out["warned"] = os.path.exists(os.path.join(last, "warned"))
    out["requeued"] = os.path.exists(os.path.join(last, "requeued"))
    out["slurm_state"] = (read(os.path.join(last, "slurm-state")) or "").strip() or None
    out["down_nodes"] = sorted(set((read(os.path.join(last, "down-nodes")) or "").split()))
    out["cancel_requested"] = os.path.exists(os.path.join(folder, "cancel-requested"))
    # slurmd opens the batch log (--output) when the job starts: none, and the job left the queue unstarted
    out["started"] = out["known"] and any(n.startswith("batch-") for n in os.listdir(folder))
    plan = read(os.path.join(folder, "tasks.json"))
    out["gpus_per_node"] = json.loads(plan).get("gpus_per_node", 0) if plan else 0
    try:
        outcome = json.loads(read(os.path.join(folder, "outcome.json")) or "null")
    except ValueError:
        outcome = None
    out["outcome"] = outcome if isinstance(outcome, dict) and outcome.get("restart") == out["restart"] else None
    try:  # the values its status masks (job_secrets.py writes them): a secret printed by a failed task
        out["mask"] = json.loads(read(os.path.join(folder, "secrets.json")) or "{}").get("mask", [])
    except (ValueError, AttributeError):
        out["mask"] = []
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
