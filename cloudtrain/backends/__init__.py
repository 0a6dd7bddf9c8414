"""Backends load lazily: naming one imports its module, and only then its cloud SDK."""

from __future__ import annotations

import importlib

from cloudtrain.backends.base import Backend, JobHandle, JobState, JobStatus, LogLine

NAMES = ("vertex", "sagemaker", "local", "slurm")


def get_backend(name: str) -> Backend:
    if name not in NAMES:
        from cloudtrain.errors import UsageError

        raise UsageError(f"unknown backend {name!r}; allowed: {', '.join(NAMES)}")
    return importlib.import_module(f"cloudtrain.backends.{name}").BACKEND


__all__ = ["NAMES", "Backend", "JobHandle", "JobState", "JobStatus", "LogLine", "get_backend"]
