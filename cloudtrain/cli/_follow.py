"""Streaming a job's logs to its end and turning its outcome into the exit code."""

from __future__ import annotations

def follow(console, handle, *, cancel_on_interrupt: bool, progress=None, live: bool = True) -> None:
    """Stream logs until the job ends; exit with its outcome. Ctrl-C detaches or cancels.

    With ``progress`` (a :class:`cloudtrain.progress.Progress`) and a terminal, a live status line
    stays at the bottom; the run's phases are printed at the end and kept in history."""
    import contextlib

    from cloudtrain.console import ReplicaPrinter
    from cloudtrain.progress import Progress

    printer = ReplicaPrinter(console)
    progress = progress or _progress_of(handle)
    sink = lambda line: (progress(line), printer(line))  # noqa: E731
    live = contextlib.nullcontext(sink)
    if live and console.is_terminal:  # never on a pipe, never with -o json
        from cloudtrain.live import LiveStatus

        live = LiveStatus(console, progress, printer)
    try:
        with live as show:
            for line in handle.logs(follow=True):
                show(line)
        status = handle.wait()
    except KeyboardInterrupt:
        if not cancel_on_interrupt:
            console.print(f"\n[yellow]Detached; job {handle.job_id} keeps running.[/yellow]")
            print_hints(console, handle.job_id)
            raise SystemExit(130) from None
        console.print(f"\n[yellow]Cancelling job {handle.job_id}…[/yellow]")
        handle.cancel()
        status = handle.wait()
    finish(console, status, progress)


def _progress_of(handle):
    """For a reattach (``logs --follow``): the job's own creation time and phase; no price is known."""
    import time

    from cloudtrain.progress import Progress, phase_of

    status = handle.status()
    progress = Progress(cost_per_hour=None, started=status.created.timestamp() if status.created else time.time())
    progress.set_phase(phase_of(status))
    return progress


def print_hints(console, job_id: str) -> None:
    console.print(f"  reattach: cloudtrain logs {job_id} --follow")
    console.print(f"  cancel:   cloudtrain cancel {job_id}")


def finish(console, status, progress=None) -> None:
    """Print the summary and the run's phases, keep both in history; exit 0 only on success, else
    the job's own code where it has one."""
    from cloudtrain import history, timeline
    from cloudtrain.console import print_kv, summary_rows
    from cloudtrain.errors import JobFailed

    phases = timeline.of_run(status, progress.marks if progress else {})
    cost_per_hour = progress.cost_per_hour if progress else None
    rows = summary_rows(status.details)
    if phases:
        rows.append(("timeline", timeline.describe(phases)))
    print_kv(console, f"Job {status.job_id}: {status.state.value}", rows)
    history.save_run(status.job_id, {"status": status.to_dict(), "cost_per_hour": cost_per_hour,
                                     "timeline": timeline.cost_shares(phases, cost_per_hour)})  # fmt: skip
    if status.state.exit_code:
        error = JobFailed(f"job {status.job_id} ended {status.state.value}" + (f": {status.message}" if status.message else ""))
        error.exit_code = status.details.get("exit_code") or status.state.exit_code
        raise error


