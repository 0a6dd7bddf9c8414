"""Time on Slurm: the job's ``--time`` from ``max_runtime`` and the GPU-hours cap, and its spelling."""

from __future__ import annotations


def time_limit(max_runtime: int, max_gpu_hours: float | None, gpus: int) -> int:
    """Seconds of ``--time``: ``max_runtime``, cut so that ``gpus`` × time stays within ``max_gpu_hours``."""
    if max_gpu_hours is None or gpus == 0:
        return max_runtime
    return min(max_runtime, int(max_gpu_hours * 3600 / gpus))


def slurm_time(seconds: int) -> str:
    """``--time`` as Slurm reads it: ``D-HH:MM:SS`` (whole minutes are what it schedules by; seconds kept)."""
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"


def parse_slurm_time(text: str) -> int | None:
    """``1-02:03:04``, ``02:03:04``, ``03:04``, ``UNLIMITED`` → seconds (None: unlimited or unreadable)."""
    text = text.strip()
    if not text or text in ("UNLIMITED", "INVALID", "NOT_SET", "Partition_Limit"):
        return None
    days, _, clock = text.rpartition("-")
    parts = [int(p) for p in clock.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    h, m, s = parts[-3:]
    return (int(days or 0) * 24 + h) * 3600 + m * 60 + s
