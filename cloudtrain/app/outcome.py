"""The end of a job: its summary rows and phases, kept in history, and the exit it maps to. Nothing here prints."""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from cloudtrain import history
from cloudtrain.backends.base import JobHandle, JobState, JobStatus
from cloudtrain.backends.cost import cost_after
from cloudtrain.console import summary_rows
from cloudtrain.errors import CloudtrainError, ExitCode, JobFailed
from cloudtrain.following import interruptions, timeline
from cloudtrain.following.progress import Progress
from cloudtrain.text.numbers import money


@dataclass(frozen=True)
class Outcome:
    """A finished job: its last status, the summary rows the CLI prints, the run record kept in history."""

    status: JobStatus
    rows: list[tuple[str, Any]]
    run: dict[str, Any]  # what ``history.save_run`` kept: status, cost_per_hour, timeline, interruptions

    @property
    def exit_code(self) -> int:
        return self.status.state.exit_code

    def error(self) -> JobFailed | None:
        """The CLI's exception for a job that did not succeed, coded by its state (errors.ExitCode); a replica's own
        code is only in the message, so ``sys.exit(2)`` never reads as bad input."""
        status = self.status
        if not status.state.exit_code:
            return None
        error = JobFailed(
            f"job {status.job_id} ended {status.state.value}" + (f": {status.message}" if status.message else "")
        )
        error.exit_code = ExitCode(status.state.exit_code)
        return error


def _check_model_outputs(handle: JobHandle | None, status: JobStatus) -> None:
    """A succeeded cloud job whose model location is empty gets a warning in its summary."""
    if status.state is not JobState.SUCCEEDED or handle is None:
        return
    try:
        warning = handle.model_outputs_warning(status)
    except CloudtrainError:  # listing is advice: a missing permission must not fail a finished job
        return
    # The warning joins the status the caller holds (``-o json``, ``wait``): every backend's ``details`` is a dict.
    if warning and isinstance(status.details, MutableMapping):
        status.details.setdefault("warnings", []).append(warning)


def final_metrics(status: JobStatus, progress: Progress | None = None) -> dict[str, float] | None:
    """The job's final numbers, for history: what its status recorded (a local run's ``done`` line or
    metrics.json), else the last epoch's loss and main metric its log showed; None when neither knows any."""
    recorded = status.detail("metrics")
    if isinstance(recorded, dict):
        found = {
            str(k): float(v) for k, v in recorded.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
        }
        if found:
            return found
    if progress is None:
        return None
    seen = progress.snapshot()
    found = {} if seen.loss is None else {"loss": float(seen.loss)}
    if seen.metric is not None:
        found[seen.metric[0]] = seen.metric[1]
    return found or None


def summarise(status: JobStatus, progress: Progress | None = None, handle: JobHandle | None = None) -> Outcome:
    """A finished job's summary and phases, kept in history (a succeeded job's empty model location checked)."""
    if handle is not None:
        _check_model_outputs(handle, status)
    phases = timeline.of_run(status, progress.marks if progress else {})
    cost_per_hour = progress.cost_per_hour if progress else None
    rows = summary_rows(status.details)
    if phases:
        rows.append(("timeline", timeline.describe(phases)))
    history.note_state(
        status.job_id,
        status.name,
        status.state.value,
        ended=status.ended.isoformat() if status.ended else None,
        metrics=final_metrics(status, progress),
    )
    cost = cost_after(status)
    if cost:
        rows.append(
            (
                "cost",
                f"{money(cost['usd'])} ({cost['basis']}; {cost['price_region']} list price, "
                f"{cost['price_date']})"
                + (f"; spot saved {money(cost['spot_savings_usd'])}" if cost.get("spot_savings_usd") else "")
                + (f"; {cost['note']}" if cost.get("note") else ""),
            )
        )
    interrupted = interruptions.summarize(
        progress.interruptions if progress else interruptions.Tracker(),
        status.detail("interruptions"),
        state=status.state.value,
    )
    if interrupted:
        rows.append(("interruptions", interruptions.describe(interrupted)))
    run = {
        "status": status.to_dict(),
        "cost_per_hour": cost_per_hour,
        "timeline": timeline.cost_shares(phases, cost_per_hour),
        "interruptions": interrupted,
    }
    history.save_run(status.job_id, run)
    return Outcome(status, rows, run)
