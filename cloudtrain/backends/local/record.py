"""A local run's record (``<output_dir>/local-run/status.json``) read without the backend: what ``list``
needs of a run (:func:`cloudtrain.backends.local.find.listed`), at the cost of one small file, no import of
the runtime backend (``backends.base`` and the config it needs take longer than reading 10,000 history
records). :class:`~cloudtrain.backends.local.job.RecordedJob` reads the same file through :func:`load` and
:func:`native_state`, so a run reads alike in ``status`` and in ``list``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cloudtrain.history import RUNS_DIR as RUNS_DIR  # where a run goes when the config names no output_dir
from cloudtrain.leftovers import process_argv, process_runs, process_start
from cloudtrain.statefiles import Damage, load_json_object

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
    if not logs.parent.is_dir():  # the whole run folder was removed (or moved) after the handle was made
        return f"its run folder {logs.parent} is gone: pass the folder's new place, or forget the run"
    return f"remove the run folder {logs.parent} (its replicas' logs are {logs}/*.log), or repair the file"


def load(status: Path, *, inside: Path | None = None) -> dict[str, Any] | Damage:
    """The run's status as recorded, checked (a known ``native_state``, ``details`` an object), or its Damage;
    ``inside``: the run folder the file must not lead out of (a link elsewhere is damage, never followed)."""
    data = load_json_object(status, required=("native_state",), recover=recover(status), inside=inside)
    if isinstance(data, Damage):
        return data
    if data["native_state"] not in NATIVE:
        return Damage(status, f"damaged (ValueError: unknown native_state {data['native_state']!r})", recover(status))
    if not isinstance(data.get("details") or {}, dict):
        return Damage(status, "damaged (TypeError: details is not an object)", recover(status))
    return data


def rebased(data: dict[str, Any], here: Path) -> dict[str, Any]:
    """The record with every path it names under the folder it ran in (``details.output_dir``, else ``name``)
    re-based onto ``here``, the folder it is in now: a run whose project was moved shows, and serves, its
    files where they are. A record read where it was written is returned as it is."""
    details = data.get("details") or {}
    old = details.get("output_dir") or data.get("name")
    new = os.path.abspath(here)
    if not isinstance(old, str) or not old or os.path.normpath(old) == new:
        return data

    root = old.rstrip("/")

    def moved(value: Any) -> Any:  # the folder itself, a path under it, or one named in a line (a warning)
        if isinstance(value, str):
            return new if value.rstrip("/") == root else value.replace(root + "/", new + "/")
        if isinstance(value, dict):
            return {k: moved(v) for k, v in value.items()}
        if isinstance(value, list):
            return [moved(v) for v in value]
        return value

    return {**data, "name": moved(data.get("name")), "details": moved(details)}


def native_state(data: Mapping[str, Any]) -> str:
    """The state a checked record stands for now: a run recorded as running whose processes are all gone
    (cloudtrain died without writing its end) has failed."""
    native = str(data["native_state"])
    details = data.get("details") or {}
    alive = any(ours(pid, start, environment=details.get("environment")) for pid, start in pids(details)) or any(
        ours(pid, start, leader=False) for pid, start in owner(details)
    )
    if native == "running" and not alive:
        return "failed"
    return native


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def owner(details: Mapping[str, Any]) -> list[tuple[int, int | None]]:
    """The detached run's supervisor, as a list of zero or one plausible (pid, start time)."""
    found = _number(details.get("owner_pid"))
    return [(found, _number(details.get("owner_start")))] if found is not None and found > 1 else []


def pids(details: Mapping[str, Any]) -> list[tuple[int, int | None]]:
    """The replicas' (process id, start time) a status file records (only plausible pids: a damaged file must
    not signal init)."""
    found = details.get("pids") or {}
    starts = details.get("pid_starts")
    starts = starts if isinstance(starts, dict) else {}
    items = found.items() if isinstance(found, dict) else []
    return [(p, _number(starts.get(name))) for name, p in items if _number(p) is not None and p > 1]


def ours(pid: int, start: int | None, *, leader: bool = True, environment: Any = None) -> bool:
    """``pid`` is still the process the run started: its start time matches the recorded one. A record
    without one (written by an older cloudtrain, or damaged) is trusted only where this machine cannot tell
    either, or, for a replica (``leader``), when the pid leads its own process group as every replica does
    *and* runs the run's own environment's Python (``environment``, its folder); never a supervisor."""
    if start is not None:
        return process_runs(pid, start)
    if process_start(pid) is None:  # no /proc here: what kill(0) says
        return process_runs(pid)
    try:
        argv0 = (process_argv(pid) or [""])[0]
        return (
            leader
            and isinstance(environment, str)
            and bool(environment)
            and os.getpgid(pid) == pid
            and os.path.isabs(argv0)  # its folder, not the link: a venv's python links to the base one
            and os.path.realpath(os.path.dirname(argv0)).startswith(
                os.path.realpath(environment).rstrip(os.sep) + os.sep
            )
        )
    except OSError:
        return False


def unproven(details: Mapping[str, Any]) -> list[int]:
    """The live pids a record names that cannot be shown to be the run's (no start time, no proof): what
    ``cancel`` refuses to signal."""
    env = details.get("environment")
    found = [(p, s, True) for p, s in pids(details)] + [(p, s, False) for p, s in owner(details)]
    return [p for p, s, lead in found if s is None and process_runs(p) and not ours(p, s, leader=lead, environment=env)]
