"""Remember submitted jobs so ``cloudtrain status JOB`` needs no --backend/--region flags.

One JSON object per line in ``<cache>/jobs.jsonl``; appends are single writes, so two
concurrent submits cannot interleave within a line. A job's later lines (its final state,
once a followed submit saw it end) supersede its earlier ones. Local runs record the
absolute path of their output folder as ``name``, so they are found from any directory.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path


def cache_dir() -> Path:
    """cloudtrain's cache (packages, local envs, job history): ``$CLOUDTRAIN_CACHE_DIR``,
    else ``$XDG_CACHE_HOME/cloudtrain``, else ``~/.cache/cloudtrain``."""
    if os.environ.get("CLOUDTRAIN_CACHE_DIR"):
        return Path(os.environ["CLOUDTRAIN_CACHE_DIR"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "cloudtrain"


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


def record(entry: JobRecord) -> None:
    path = cache_dir() / "jobs.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(asdict(entry)) + "\n")


def _entries() -> list[JobRecord]:
    path = cache_dir() / "jobs.jsonl"
    if not path.exists():
        return []
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            found.append(JobRecord(**json.loads(line)))
        except (ValueError, TypeError):
            continue  # a torn or foreign line must not hide the others
    return found


def find(job_id: str) -> JobRecord | None:
    """The newest record whose short id or full name is ``job_id``."""
    found = None
    for entry in _entries():
        if job_id in (entry.job_id, entry.name):
            found = entry
    return found


def recent(limit: int = 20, *, backend: str | None = None, region: str | None = None) -> list[JobRecord]:
    """The newest jobs first, one record each (its latest), optionally of one backend / region."""
    latest: dict[tuple[str, str], JobRecord] = {}
    for entry in _entries():
        key = (entry.backend, entry.name)
        earlier = latest.get(key)  # updating keeps the submit order
        latest[key] = entry if earlier is None else JobRecord(**{**asdict(earlier), **_known(entry)})
    jobs = [e for e in reversed(latest.values()) if (not backend or e.backend == backend)
            and (not region or e.region == region)]  # fmt: skip
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
    path = run_file(job_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def load_run(job_id: str) -> dict | None:
    try:
        data = json.loads(run_file(job_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
