"""Which backend, region and project a job id belongs to."""

from __future__ import annotations

import os
import re
from typing import Any

from cloudtrain.app.prepare import load_spec
from cloudtrain.errors import UsageError


_VERTEX_NAME = re.compile(r"^projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/customJobs/(?P<id>\d+)$")
_SAGEMAKER_ARN = re.compile(r"^arn:aws[a-z-]*:sagemaker:(?P<region>[^:]+):\d+:training-job/(?P<id>.+)$")


def _where(job_id: str | None, backend, region, project, config_path) -> tuple[Any, str, str, str | None]:
    """Find backend, region, project for a job: flags, then --config, then the full name, then history."""
    from cloudtrain.backends import get_backend

    if config_path and not (backend and region):
        loaded, _ = load_spec(config_path, ())
        cfg = loaded.config
        backend, region, project = backend or cfg.backend, region or cfg.region, project or cfg.project
    if job_id and not backend:
        if _is_local_run(job_id):
            return get_backend("local"), job_id, region or "", project
        if match := _VERTEX_NAME.match(job_id):
            backend, region, project, job_id = "vertex", match["region"], match["project"], match["id"]
        elif match := _SAGEMAKER_ARN.match(job_id):
            backend, region, job_id = "sagemaker", match["region"], match["id"]
        else:
            from cloudtrain.history import find

            entry = find(job_id)
            if entry and entry.backend == "local":  # by the output folder it recorded, from any directory
                return get_backend("local"), entry.attach_id, region or entry.region, project
            if entry:
                backend, region, project = entry.backend, region or entry.region, project or entry.project
    if not backend or not region:
        what = f"job {job_id!r} is not in this machine's history" if job_id else "no backend or region given"
        raise UsageError(what, hint="pass --backend and --region (or --config CONFIG)")
    return get_backend(backend), job_id, region, project


def _is_local_run(path: str) -> bool:
    from cloudtrain.backends.local.job import RUN_DIR

    return os.path.isfile(os.path.join(os.path.expanduser(path), RUN_DIR, "status.json"))
