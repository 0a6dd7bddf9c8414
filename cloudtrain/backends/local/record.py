"""A local run's record (``<output_dir>/local-run/status.json``) read without the backend: what ``list``
needs of a run (:func:`cloudtrain.backends.local.find.listed`), at the cost of one small file, no import of
the runtime backend (``backends.base`` and the config it needs take longer than reading 10,000 history
records). :class:`~cloudtrain.backends.local.job.RecordedJob` reads the same file through :func:`load` and
:func:`native_state`, so a run reads alike in ``status`` and in ``list``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cloudtrain.leftovers import process_runs
from cloudtrain.statefiles import Damage, load_json_object

RUNS_DIR = "cloudtrain-runs"  # where a run goes when the config names no output_dir (spec.LOCAL_RUNS_DIR)
RUN_DIR = "local-run"  # inside the output dir: replica logs, replicas.json, status.json, lines.jsonl
STATUS = "status.json"
#: A local run's own states → cloudtrain's (JobState values).
NATIVE = {
    "running": "RUNNING",
    "succeeded": "SUCCEEDED",
    "failed": "FAILED",
    "timed_out": "TIMED_OUT",
    "cancelled": "CANCELLED",
    "preempted": "PREEMPTED",  # a replica saved and exited 5 on a SIGTERM that was not ours
}


def recover(status: Path) -> str:
    logs = status.parent
    return f"remove the run folder {logs.parent} (its replicas' logs are {logs}/*.log), or repair the file"


def load(status: Path) -> dict[str, Any] | Damage:
    """The run's status as recorded, checked (a known ``native_state``, ``details`` an object), or its Damage."""
    data = load_json_object(status, required=("native_state",), recover=recover(status))
    if isinstance(data, Damage):
        return data
    if data["native_state"] not in NATIVE:
        return Damage(status, f"damaged (ValueError: unknown native_state {data['native_state']!r})", recover(status))
    if not isinstance(data.get("details") or {}, dict):
        return Damage(status, "damaged (TypeError: details is not an object)", recover(status))
    return data


def native_state(data: Mapping[str, Any]) -> str:
    """The state a checked record stands for now: a run recorded as running whose processes are all gone
    (cloudtrain died without writing its end) has failed."""
    native = str(data["native_state"])
    details = data.get("details") or {}
    if native == "running" and not any(process_runs(pid) for pid in [*pids(details), *owner(details)]):
        return "failed"
    return native


def owner(details: Mapping[str, Any]) -> list[int]:
    """The detached run's supervisor, as a list of zero or one plausible pid."""
    found = details.get("owner_pid")
    return [found] if isinstance(found, int) and not isinstance(found, bool) and found > 1 else []


def pids(details: Mapping[str, Any]) -> list[int]:
    """The replicas' process ids a status file records (only plausible ones: a damaged file must not signal init)."""
    found = details.get("pids") or {}
    values = found.values() if isinstance(found, dict) else []
    return [p for p in values if isinstance(p, int) and not isinstance(p, bool) and p > 1]
