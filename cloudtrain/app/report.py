"""A run report of one or several jobs: an HTML page with PNGs (``cloudtrain report``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from cloudtrain import history
from cloudtrain.app.sweeps.lookup import load_results
from cloudtrain.backends import get_backend, parse_job_id
from cloudtrain.errors import UsageError
from cloudtrain.reporting import collect, figures, page
from cloudtrain.reporting.collect import RunData


@dataclass(frozen=True)
class ReportFiles:
    page: Path
    figures: dict[str, Path]


REPORTS_DIR = "cloudtrain-reports"
_LONGEST = 120  # characters of a folder name made of several ids; longer ones are cut and hashed


def write_report(job_ids: list[str], out: Path | None = None) -> ReportFiles:
    """Collect each job's run, draw its figures and write the page into ``out`` (one folder per set of jobs)."""
    figures.pyplot()  # one clear line now if matplotlib is missing, before any cloud call
    runs = [collect_run(job_id) for job_id in job_ids]
    out = out or Path(REPORTS_DIR, folder_name([run.job_id for run in runs]))
    out.mkdir(parents=True, exist_ok=True)
    drawn = figures.draw_all(runs, out)
    return ReportFiles(page.write(runs, drawn, out), drawn)


def collect_run(job_id: str) -> RunData:
    """Everything the report shows about ``job_id``, from this machine's history and the job's backend."""
    entry = history.find(job_id)
    if entry is None:  # a run found by itself (a local run's folder, or its id inside its project)
        found = parse_job_id(job_id)
        if found is None or get_backend(found[0]).facts.location_keys:
            close = history.nearest(job_id)
            hint = f"did you mean {' or '.join(close)}?" if close else "see cloudtrain list"
            raise UsageError(f"job {job_id!r} is not in this machine's history", hint=hint)
        backend, attach_id, _ = found
        region, project = None, None
    elif entry.kind == "sweep":
        return collect.from_sweep(entry.job_id, entry.backend, load_results(entry.job_id))
    else:
        backend, attach_id, region, project = entry.backend, entry.attach_id, entry.region, entry.project
    handle = get_backend(backend).attach(attach_id, region=region, project=project)
    status = handle.status()
    lines = list(handle.logs(follow=False))
    saved = history.load_run(status.job_id if entry is None else entry.job_id) or {}
    return collect.from_parts(status, lines, backend, saved, entry or history.find(status.job_id))


def folder_name(job_ids: list[str]) -> str:
    """The report folder: one job's id, or ``A+B+C`` in order; too long a set: first id, count and hash."""
    safe = ["".join(c if c.isalnum() or c in "-_." else "_" for c in job_id) for job_id in job_ids]
    name = "+".join(safe)
    if len(name) <= _LONGEST:
        return name
    digest = hashlib.sha256("\n".join(job_ids).encode()).hexdigest()[:10]
    return f"{safe[0][:80]}+{len(safe) - 1}-more-{digest}"
