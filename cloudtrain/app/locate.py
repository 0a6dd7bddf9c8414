"""Which backend, region and project a job id belongs to."""

from __future__ import annotations

from dataclasses import dataclass

from cloudtrain.app.prepare import load_spec
from cloudtrain.backends import get_backend, parse_job_id
from cloudtrain.backends.base import Backend
from cloudtrain.errors import UsageError
from cloudtrain.history import expand, find, nearest


@dataclass(frozen=True)
class Location:
    """Where a job is: its backend, the id that backend's ``attach`` takes, and its region and project."""

    backend: Backend
    job_id: str
    region: str
    project: str | None


def locate(
    job_id: str | None,
    backend: str | None = None,
    region: str | None = None,
    project: str | None = None,
    config_path: str | None = None,
) -> Location:
    """Find backend, region, project for a job: flags, then ``--config``, then the full name, then history.
    Without a ``job_id``: where the flags (or the config) point, for a cloud's own job list."""
    if config_path and not (backend and region):
        loaded, _ = load_spec(config_path, ())
        cfg = loaded.config
        backend, region, project = backend or cfg.backend, region or cfg.region, project or cfg.project
    if job_id and not backend:
        job_id = expand(job_id)  # last, a prefix or a suffix of an id here (the CLI's arguments did it already)
        if found := parse_job_id(job_id):
            backend, job_id, location = found
            if not get_backend(backend).facts.location_keys:  # found by itself (a local run's folder)
                return Location(get_backend(backend), job_id, region or "", project)
            region, project = location.get("region", region), location.get("project", project)
        else:
            entry = find(job_id)
            if entry and not get_backend(entry.backend).facts.location_keys:  # by the folder it recorded, from anywhere
                return Location(get_backend(entry.backend), entry.attach_id, region or entry.region, project)
            if entry:
                backend, region, project = entry.backend, region or entry.region, project or entry.project
    impl = get_backend(backend) if backend else None
    if impl is None or ("region" in impl.facts.location_keys and not region):  # what else it needs, attach says
        what = f"job {job_id!r} is not in this machine's history" if job_id else "no backend or region given"
        close = nearest(job_id) if job_id and not backend else []
        hint = (
            f"did you mean {' or '.join(close)}? (cloudtrain list shows the jobs here)"
            if close
            else "pass --backend and --region (or --config CONFIG)"
        )
        raise UsageError(what, hint=hint)
    return Location(impl, job_id or "", region or "", project)
