"""The end of a job: its summary rows, kept in history, and the exit it maps to."""

from __future__ import annotations


def _check_model_outputs(handle, status) -> None:
    """A succeeded cloud job whose model location is empty gets a warning in its summary."""
    from cloudtrain.backends.base import JobState
    from cloudtrain.errors import CloudtrainError

    check = getattr(handle, "model_outputs_warning", None)
    if status.state is not JobState.SUCCEEDED or check is None:
        return
    try:
        warning = check(status)
    except CloudtrainError:  # listing is advice: a missing permission must not fail a finished job
        return
    if warning:
        status.details.setdefault("warnings", []).append(warning)


def finish(console, status, progress=None, *, output: str = "text") -> None:
    """Print the summary and the run's phases (and with ``-o json`` the status on stdout), keep both
    in history; exit with the state's code from the one table (errors.ExitCode).

    A replica's own code is in the message, never passed through, so a user's ``sys.exit(2)``
    cannot read as bad input."""
    from cloudtrain import history, timeline
    from cloudtrain.console import print_json, print_kv, summary_rows
    from cloudtrain.errors import JobFailed

    phases = timeline.of_run(status, progress.marks if progress else {})
    cost_per_hour = progress.cost_per_hour if progress else None
    rows = summary_rows(status.details)
    if phases:
        rows.append(("timeline", timeline.describe(phases)))
    history.note_state(status.job_id, status.name, status.state.value)
    from cloudtrain.catalog.cost import cost_after

    cost = cost_after(status)
    if cost:
        from cloudtrain.numbers import money

        rows.append(("cost", f"{money(cost['usd'])} ({cost['basis']}; {cost['price_region']} list price, "
                             f"{cost['price_date']})" + (f"; spot saved {money(cost['spot_savings_usd'])}"
                                                        if cost.get("spot_savings_usd") else "")
                     + (f"; {cost['note']}" if cost.get("note") else "")))
    from cloudtrain import interruptions

    interrupted = interruptions.summarize(progress.interruptions if progress else interruptions.Tracker(),
                                          status.details.get("spot_interruptions"), state=status.state.value)
    if interrupted:
        rows.append(("interruptions", interruptions.describe(interrupted)))
    print_kv(console, f"Job {status.job_id}: {status.state.value}", rows)
    history.save_run(status.job_id, {"status": status.to_dict(), "cost_per_hour": cost_per_hour,
                                     "timeline": timeline.cost_shares(phases, cost_per_hour),
                                     "interruptions": interrupted})  # fmt: skip
    if output == "json":
        print_json(status.to_dict())
    if status.state.exit_code:
        error = JobFailed(f"job {status.job_id} ended {status.state.value}" + (f": {status.message}" if status.message else ""))
        error.exit_code = status.state.exit_code
        raise error
