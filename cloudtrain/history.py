"""Remember submitted jobs so ``cloudtrain status JOB`` needs no --backend/--region flags.

One JSON object per line in ``<cache>/jobs.jsonl``. Appends are one locked write each
(:func:`cloudtrain.statefiles.append_line`), so two concurrent submits cannot interleave
within a line. A job's later lines (its final state, once a followed submit saw it end)
supersede its earlier ones. Local runs record the absolute path of their output folder as
``name``, so they are found from any directory. Reading is tolerant: a damaged line, a
record of a backend this cloudtrain does not know, or a history that cannot be read at all
is one warning on stderr, and every good record is still found.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from cloudtrain import statefiles
from cloudtrain.backends import LOCAL, names  # the registry alone: no backend is imported

log = logging.getLogger("cloudtrain.history")


def cache_dir() -> Path:
    """cloudtrain's cache (packages, local envs, job history): ``$CLOUDTRAIN_CACHE_DIR``,
    else ``$XDG_CACHE_HOME/cloudtrain``, else ``~/.cache/cloudtrain``."""
    if os.environ.get("CLOUDTRAIN_CACHE_DIR"):
        return Path(os.environ["CLOUDTRAIN_CACHE_DIR"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "cloudtrain"


def history_file() -> Path:
    return cache_dir() / "jobs.jsonl"


@dataclass(frozen=True)
class JobRecord:
    job_id: str
    name: str  # full resource name / ARN
    backend: str
    region: str
    project: str | None = None
    config: str | None = None
    kind: str = "job"  # job | sweep | trial (a sweep's trial)
    created: str | None = None  # ISO time of the submit
    state: str | None = None  # the last state this machine saw (JobState value)
    experiment: str | None = None  # the config's ``experiment:`` (``list``/``report``/``tensorboard --experiment``)

    @property
    def attach_id(self) -> str:
        """What the backend's ``attach`` takes: a local run's output folder (its absolute path, so the
        run is found from any directory), else the job id."""
        return self.name if self.backend == LOCAL else self.job_id


_FIELDS = {f.name for f in fields(JobRecord)}
_REQUIRED = ("job_id", "name", "backend", "region")
_TEXT = ("project", "config", "kind", "created", "state", "experiment")


def record(entry: JobRecord) -> None:
    """Append one record. A history that cannot be written is a warning: the job exists anyway."""
    path = history_file()
    try:
        statefiles.append_line(path, json.dumps(asdict(entry)))
    except OSError as exc:
        log.warning(
            "warning: %s: cannot record job %s (%s); later commands need --backend and --region",
            path,
            entry.job_id,
            exc.strerror or exc,
        )


def records() -> list[JobRecord]:
    """Every good record, oldest first; bad lines and unknown backends are skipped with one warning."""
    lines = statefiles.read_json_lines(history_file(), check=_problem)
    return [JobRecord(**{k: v for k, v in data.items() if k in _FIELDS}) for _, data in lines]


def _problem(data: dict) -> str | None:
    missing = [k for k in _REQUIRED if not isinstance(data.get(k), str)]
    if missing:
        return f"no {', '.join(missing)}"
    not_text = [k for k in _TEXT if data.get(k) is not None and not isinstance(data[k], str)]
    if not_text:
        return f"{not_text[0]} is not text"
    if data["backend"] not in names():
        return f"unknown backend {data['backend']!r}, allowed: {', '.join(names())}"
    return None


def find(job_id: str) -> JobRecord | None:
    """The newest record whose short id or full name is ``job_id``.

    Read backwards from the end of the history, parsing only lines that hold ``job_id`` as a
    JSON string: the cost is the distance from the end, not the length of the history
    (``status`` of a recent job at 200,000 records: milliseconds, not seconds). Damage
    elsewhere in the history is not this lookup's to report; ``list`` reads it all."""
    tokens = {json.dumps(job_id).encode(), json.dumps(job_id, ensure_ascii=False).encode("utf-8", "replace")}
    data = statefiles.last_json_line(
        history_file(), lambda d: job_id in (d["job_id"], d["name"]), contains=tokens, check=_problem
    )
    return None if data is None else JobRecord(**{k: v for k, v in data.items() if k in _FIELDS})


def recent(
    limit: int = 20, *, backend: str | None = None, region: str | None = None, experiment: str | None = None
) -> list[JobRecord]:
    """The newest jobs first, one record each (its latest), optionally of one backend / region / experiment."""
    latest: dict[tuple[str, str], JobRecord] = {}
    for entry in records():
        key = (entry.backend, entry.name)
        earlier = latest.get(key)  # updating keeps the submit order
        latest[key] = entry if earlier is None else JobRecord(**{**asdict(earlier), **_known(entry)})
    jobs = [
        e
        for e in reversed(latest.values())
        if (not backend or e.backend == backend)
        and (not region or e.region == region)
        and (not experiment or e.experiment == experiment)
    ]
    return jobs[:limit]


def _known(entry: JobRecord) -> dict:
    return {k: v for k, v in asdict(entry).items() if v is not None}


def note_state(job_id: str, name: str, state: str) -> None:
    """Record the state a job was last seen in, if this machine submitted it (``list`` shows it)."""
    entry = find(name) or find(job_id)
    if entry is not None and entry.state != state:
        record(JobRecord(**{**asdict(entry), "state": state}))


def run_file(job_id: str) -> Path:
    """Where the end of a followed run is kept: its final status, phases and price (the run report reads it)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in job_id)
    return cache_dir() / "runs" / f"{safe}.json"


def save_run(job_id: str, data: dict) -> None:
    """Write atomically (a reader never sees half a file); a failure to write is not the job's failure."""
    try:
        statefiles.write_atomic(run_file(job_id), json.dumps(data, indent=2, default=str))
    except OSError:
        pass


def load_run(job_id: str) -> dict | None:
    """What ``save_run`` kept; None when absent or damaged (it is advice: callers fall back to the job's log)."""
    data = statefiles.load_json_object(run_file(job_id))
    return None if isinstance(data, statefiles.Damage) else data
