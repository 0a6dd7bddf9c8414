"""A run report of one or several jobs: an HTML page with PNGs (``cloudtrain report``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cloudtrain.reporting import collect, figures, page


@dataclass(frozen=True)
class ReportFiles:
    page: Path
    figures: dict[str, Path]


def write_report(job_ids: list[str], out: Path | None = None) -> ReportFiles:
    """Collect each job's run, draw its figures and write the page into ``out``
    (default: ``cloudtrain-reports/<first job>``)."""
    figures.pyplot()  # one clear line now if matplotlib is missing, before any cloud call
    runs = [collect.collect(job_id) for job_id in job_ids]
    out = out or Path("cloudtrain-reports", job_ids[0])
    out.mkdir(parents=True, exist_ok=True)
    drawn = figures.draw_all(runs, out)
    return ReportFiles(page.write(runs, drawn, out), drawn)
