"""Printing a followed job: its lines, the live status line, the steps of a Ctrl-C, the summary and the
exit code. Following itself is the app layer's (:mod:`cloudtrain.app.follow`)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from cloudtrain.app.follow import Show, StopStep, cancel_job, follow_job, masked_lines, watch_progress
from cloudtrain.app.notices import Detached
from cloudtrain.app.outcome import summarise
from cloudtrain.backends.base import JobHandle, JobStatus, LogLine
from cloudtrain.console import Console, ReplicaPrinter, print_json, print_kv
from cloudtrain.following.progress import Progress
from cloudtrain.following.status_line import LiveStatus

__all__ = ["finish", "follow", "masked_lines", "print_detached", "print_hints"]

#: What each step of a cancel on Ctrl-C prints (after ``Cancelling job …``'s own line).
_STOP_WORDS: dict[StopStep, str] = {
    "saving": "\n[yellow]stopping: saving a checkpoint… (Ctrl-C again to kill now)[/yellow]",
    "stopping": "\n[yellow]stopping every replica (SIGTERM; Ctrl-C again to kill now)[/yellow]",
    "killing": "[yellow]killing every replica now[/yellow]",
}


def follow(
    console: Console,
    handle: JobHandle,
    *,
    cancel_on_interrupt: bool,
    progress: Progress | None = None,
    live: bool = True,
    output: str = "text",
    debug: bool = False,
    drain: float | None = None,
    show_line: Show | None = None,
) -> None:
    """Stream logs until the job ends; exit with its outcome. Ctrl-C detaches or cancels.

    With ``progress`` (a :class:`cloudtrain.following.progress.Progress`) and a terminal, a live status line
    stays at the bottom; the run's phases are printed at the end and kept in history. DEBUG lines
    (a local run's TensorFlow start-up noise) are shown only with ``debug``. Cloud trouble while
    following (5xx, throttling, refused connections) is retried by the backend's follower; only an
    outage it gives up on ends here, with exit code 3, never 1 (kept for a job that failed).
    ``drain``: the stop rule's quiet period (``--drain``), None for the backend's default.
    ``show_line``: prints each line instead of the replica printer (``logs -o json``: a JSON object
    per line on stdout, while ``console`` gets the summary and the outcome the same way as text)."""
    watched = progress or watch_progress(handle)
    printer: Show = show_line or ReplicaPrinter(console, show_debug=debug, epochs=watched.epochs)

    def sink(line: LogLine) -> None:
        watched(line)
        printer(line)

    display: AbstractContextManager[Show] | None = None
    if live and output != "json" and console.is_terminal:  # never on a pipe, never with -o json
        display = LiveStatus(console, watched, printer)
    try:
        status = follow_job(
            handle,
            show=sink,
            display=display,
            cancel_on_interrupt=cancel_on_interrupt,
            drain=drain,
            on_stop=_stop_printer(console, handle),
        )
    except Detached as detached:
        print_detached(console, detached.job_id, detached.reattach)
        raise SystemExit(130) from None
    finish(console, status, watched, output=output, handle=handle)


def _cancel(console: Console, handle: JobHandle, *, show: Show, shown: int) -> JobStatus:
    """Cancel as a Ctrl-C while following does (:func:`cloudtrain.app.follow.cancel_job`), printing each step."""
    return cancel_job(handle, show=show, shown=shown, on_stop=_stop_printer(console, handle))


def _stop_printer(console: Console, handle: JobHandle) -> Callable[[StopStep], None]:
    def say(step: StopStep) -> None:
        if step == "cancelling":
            console.print(f"\n[yellow]Cancelling job {handle.job_id}…[/yellow]")
        else:
            console.print(_STOP_WORDS[step])

    return say


def print_detached(console: Console, job_id: str, reattach: str | None = None) -> None:
    """Ctrl-C without cancel: the job keeps running, and how to find it again."""
    console.print(f"\n[yellow]Detached; job {job_id} keeps running.[/yellow]")
    print_hints(console, job_id, reattach)


def print_hints(console: Console, job_id: str, reattach: str | None = None) -> None:
    console.print(f"  reattach: {reattach or f'cloudtrain logs {job_id} --follow'}", markup=False)
    console.print(f"  cancel:   cloudtrain cancel {job_id}")


def finish(
    console: Console,
    status: JobStatus,
    progress: Progress | None = None,
    *,
    output: str = "text",
    handle: JobHandle | None = None,
) -> None:
    """Print the summary and the run's phases (and with ``-o json`` the status on stdout), kept in
    history by the app layer; exit with the state's code from the one table (errors.ExitCode)."""
    outcome = summarise(status, progress, handle)
    print_kv(console, f"Job {status.job_id}: {status.state.value}", outcome.rows)
    if output == "json":
        print_json(status.to_dict())
    if error := outcome.error():
        raise error
