"""``cloudtrain list`` of this machine's history, one row per job. Cheap by design (10,000 records: bench/cli_bench.py):
the history is read once, and a job's record through its backend's light reader, never the backend."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from cloudtrain import history
from cloudtrain.backend_rules import states_reader
from cloudtrain.backends import listed_reader
from cloudtrain.errors import CloudtrainError
from cloudtrain.following.events import main_metric
from cloudtrain.history import JobRecord


@dataclass(frozen=True)
class Listed:
    """One row of ``list``: the job's record in history, and what is known of it now."""

    record: JobRecord
    state: str | None
    seconds: float | None  # from the job's creation to its end (None while it runs, or when unknown)
    metric: tuple[str, float] | None
    place: str  # where it is, shortened: never an absolute path of a run folder under here or ~

    def to_dict(self) -> dict[str, Any]:
        """``list -o json``: the history record with its current state, plus ``seconds``, ``metric``, ``place``."""
        return {
            **asdict(self.record),
            "state": self.state,
            "seconds": self.seconds,
            "metric": None if self.metric is None else {"name": self.metric[0], "value": self.metric[1]},
            "place": self.place,
        }


def listed(
    limit: int = 20, *, backend: str | None = None, region: str | None = None, experiment: str | None = None
) -> list[Listed]:
    """The newest jobs of this machine's history, one :class:`Listed` each."""
    try:
        here = os.getcwd()
    except FileNotFoundError:  # the folder this shell is in was removed: places relative to ~
        here = str(Path.home())
    entries = history.recent(limit, backend=backend, region=region, experiment=experiment)
    return [_one(entry, here, now) for now in [_states_now(entries)] for entry in entries]


def _states_now(entries: list[JobRecord]) -> dict[str, str]:
    """The state now of the listed jobs known only by history that have not ended, from the backends that
    read many jobs in one call (Slurm: one ``squeue`` a cluster); none asked when every job has ended."""
    live = [
        e
        for e in entries
        if e.state not in history.ENDED and listed_reader(e.backend) is None and states_reader(e.backend)
    ]
    return _states_at_once(live) if live else {}


def _one(entry: JobRecord, here: str, now: dict[str, str]) -> Listed:
    reader = listed_reader(entry.backend)
    own = reader(entry.attach_id) if reader is not None else None
    if own is None:  # known only by history (a cloud job; a local run whose folder is gone)
        created, ended, metrics = entry.created, entry.ended, entry.metrics
        state = now.get(entry.job_id) or entry.state
        place = _short(entry.name, here, entry.job_id) if reader is not None else _cloud_place(entry)
    else:
        created, ended = own.get("created") or entry.created, own.get("ended")
        metrics, state = own.get("metrics") or entry.metrics, own["state"]
        place = _short(own["folder"], here, entry.job_id)
    name = entry.name if own is None else os.path.abspath(own["folder"])  # where it is now (a project moved since)
    entry = replace(entry, name=name, created=created, ended=ended, metrics=metrics, state=state)  # -o json: as now
    return Listed(entry, state, _seconds(created, ended), main_metric(metrics), place)


def _seconds(created: str | None, ended: str | None) -> float | None:
    if not created or not ended:
        return None
    try:
        start, end = dt.datetime.fromisoformat(created), dt.datetime.fromisoformat(ended)
        if (start.tzinfo is None) != (end.tzinfo is None):
            return None
        seconds = (end - start).total_seconds()
    except (TypeError, ValueError):
        return None
    return seconds if seconds >= 0 else None


def _cloud_place(entry: JobRecord) -> str:
    return f"{entry.backend} {entry.region}" + (f" {entry.project}" if entry.project else "")


def _short(folder: str, here: str, job_id: str) -> str:
    """A run folder as people say it (``./…``, ``~/…``, ``../…``); one cloudtrain chose shows as its project."""
    path = Path(folder)
    if path.name == job_id and path.parent.name == history.RUNS_DIR:
        path = path.parent.parent
    try:
        rel = os.path.relpath(path, here)
    except ValueError:  # another drive
        rel = str(path)
    if rel == ".":
        return "./"
    if not rel.startswith(".."):
        return f"./{rel}"
    home, text = str(Path.home()), str(path)
    if text == home or text.startswith(home + os.sep):
        return "~" + text[len(home) :]
    return rel  # never an absolute path: it would fill a line of its own


def _states_at_once(entries: list[JobRecord]) -> dict[str, str]:
    """The current state of each listed job whose backend reads many in one call (Slurm: one ``squeue``
    per cluster), by job id; the others (and a cluster out of reach) keep what history last saw."""
    groups: dict[tuple[str, str | None, str | None], list[str]] = {}
    for entry in entries:
        if entry.kind == "job":
            groups.setdefault((entry.backend, entry.region, entry.project), []).append(entry.job_id)
    found: dict[str, str] = {}
    for (backend, region, project), ids in groups.items():
        try:
            if reader := states_reader(backend):
                found.update(reader(ids, region=region, project=project))
        except CloudtrainError:
            continue
    return found
