"""Remember submitted jobs so ``cloudtrain status JOB`` needs no --backend/--region flags.

One JSON object per line in ``<cache>/jobs.jsonl``; appends are single writes, so two
concurrent submits cannot interleave within a line.
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


def record(entry: JobRecord) -> None:
    path = cache_dir() / "jobs.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(asdict(entry)) + "\n")


def find(job_id: str) -> JobRecord | None:
    """The newest record whose short id or full name is ``job_id``."""
    path = cache_dir() / "jobs.jsonl"
    if not path.exists():
        return None
    found = None
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = JobRecord(**json.loads(line))
        except (ValueError, TypeError):
            continue  # a torn or foreign line must not hide the others
        if job_id in (entry.job_id, entry.name):
            found = entry
    return found


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
