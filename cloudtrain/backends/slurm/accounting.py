"""What Slurm's accounting says of an ended job (``sacct``), where the cluster keeps accounting.

``sacct -X -D --parsable2``: a line per allocation, every run of a requeued job included. GPU-hours are each run's
``ElapsedRaw`` times the GPUs of its ``AllocTRES``. Without accounting, sacct answers with an error: nothing to read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FIELDS = ("JobID", "State", "ElapsedRaw", "AllocTRES", "NNodes")
SACCT_SOURCE = "sacct (AllocTRES GPUs × ElapsedRaw of every run)"
LAUNCHER_SOURCE = "the launcher's start and end times × GPUs per node"


def sacct_command(job_id: str) -> list[str]:
    return ["sacct", "-j", job_id, "-X", "-D", "--parsable2", "-o", ",".join(FIELDS)]


@dataclass(frozen=True)
class Usage:
    state: str  # the last run's State (``CANCELLED by 0``, ``TIMEOUT`` …)
    gpu_hours: float
    runs: int


def tres_gpus(tres: str) -> int:
    """``billing=4,cpu=4,gres/gpu=2,mem=1G,node=2`` → 2; typed entries (``gres/gpu:h100=2``) count where
    the plain one is missing; 0 for CPU jobs."""
    plain, typed = None, 0
    for item in tres.split(","):
        key, _, value = item.partition("=")
        if not value.isdigit():
            continue
        if key == "gres/gpu":
            plain = int(value)
        elif key.startswith("gres/gpu:"):
            typed += int(value)
    return plain if plain is not None else typed


def parse_sacct(text: str, job_id: str) -> Usage | None:
    """The job's usage from ``sacct --parsable2`` output (header first); None when no line names it."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    header = lines[0].split("|")
    rows = [dict(zip(header, line.split("|"), strict=False)) for line in lines[1:]]
    rows = [r for r in rows if r.get("JobID", "").split(".")[0] == job_id]
    if not rows:
        return None
    seconds = sum(int(r.get("ElapsedRaw") or 0) * tres_gpus(r.get("AllocTRES", "")) for r in rows)
    return Usage(rows[-1].get("State", ""), round(seconds / 3600, 4), len(rows))


def gpu_hours(usage: Usage | None, tasks: list[dict[str, Any]], gpus_per_node: int) -> tuple[float, str] | None:
    """(GPU-hours, where they come from) of an ended job: ``sacct`` where accounting is on, else the
    launcher's task records (each task's end − start × GPUs per node); None when neither knows."""
    if usage is not None:
        return usage.gpu_hours, SACCT_SOURCE
    ran = [t for t in tasks if t.get("start") is not None and t.get("end") is not None]
    if not ran:
        return None
    seconds = sum(t["end"] - t["start"] for t in ran)
    return round(seconds * gpus_per_node / 3600, 4), LAUNCHER_SOURCE
