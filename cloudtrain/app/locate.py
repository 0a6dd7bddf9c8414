"""Which backend, region and project a job id belongs to."""

from __future__ import annotations

import os
from typing import Any

from cloudtrain.app.prepare import load_spec
from cloudtrain.errors import UsageError


def _where(job_id: str | None, backend, region, project, config_path) -> tuple[Any, str, str, str | None]:
    """Find backend, region, project for a job: flags, then --config, then the full name, then history."""
    from cloudtrain.backends import get_backend, parse_job_id

    if config_path and not (backend and region):
        loaded, _ = load_spec(config_path, ())
        cfg = loaded.config
        backend, region, project = backend or cfg.backend, region or cfg.region, project or cfg.project
    if job_id and not backend:
        if found := parse_job_id(job_id):
            backend, job_id, location = found
            if not get_backend(backend).location_keys:  # found by itself (a local run's folder)
                return get_backend(backend), job_id, region or "", project
            region, project = location.get("region", region), location.get("project", project)
        else:
            from cloudtrain.history import find

            entry = find(job_id)
            if entry and not get_backend(entry.backend).location_keys:  # by the folder it recorded, from anywhere
                return get_backend(entry.backend), entry.attach_id, region or entry.region, project
            if entry:
                backend, region, project = entry.backend, region or entry.region, project or entry.project
    impl = get_backend(backend) if backend else None
    if impl is None or ("region" in impl.location_keys and not region):  # what else it needs, attach says
        what = f"job {job_id!r} is not in this machine's history" if job_id else "no backend or region given"
        raise UsageError(what, hint="pass --backend and --region (or --config CONFIG)")
    return impl, job_id, region or "", project


def _is_local_run(path: str) -> bool:
    from cloudtrain.backends.local.job import RUN_DIR

    return os.path.isfile(os.path.join(os.path.expanduser(path), RUN_DIR, "status.json"))
