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
