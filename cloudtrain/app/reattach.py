"""How to find a job again: the command that follows it, and the hint when the cloud stops answering."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from cloudtrain.backends.base import JobHandle
from cloudtrain.errors import CloudUnreachable


@contextlib.contextmanager
def reattach_hint(job_id: str, command: str | None = None) -> Iterator[None]:
    """The cloud stopped answering after the job was created: it may still run; say how to reattach."""
    try:
        yield
    except CloudUnreachable as exc:
        exc.hint = f"the job may still be running; reattach: {command or f'cloudtrain logs {job_id} --follow'}"
        raise


def drain_kwargs(drain: float | None) -> dict[str, Any]:
    """``drain`` for ``JobHandle.logs`` only when given: handles without a stop rule need not take it."""
    return {} if drain is None else {"drain": drain}


def reattach_command(handle: JobHandle, drain: float | None = None) -> str:
    """The exact command that follows this job again, from any directory."""
    parts = ["cloudtrain", "logs", handle.job_id, "--follow"]
    if handle.location:  # a job found by its folder needs nothing more
        parts += ["--backend", handle.backend_name]
        for key in ("region", "project"):  # the flags `logs` takes
            if handle.location.get(key):
                parts += [f"--{key}", handle.location[key]]
    if drain is not None:
        parts += ["--drain", f"{drain:g}s"]
    return " ".join(parts)
