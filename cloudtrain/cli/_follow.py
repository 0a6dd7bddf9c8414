"""Printing a followed job: its lines, the live status line, the steps of a Ctrl-C, the summary and the
exit code. Following itself is the app layer's (:mod:`cloudtrain.app.follow`)."""

from __future__ import annotations

from contextlib import AbstractContextManager

from cloudtrain.app.follow import Show, StopStep, cancel_job, follow_to_end, masked_lines, watch_progress
from cloudtrain.app.notices import Detached
from cloudtrain.app.outcome import Outcome, summarise
from cloudtrain.backends.base import JobHandle, JobStatus, LogLine
from cloudtrain.console import Console, ReplicaPrinter, print_json, print_kv
from cloudtrain.following.progress import Progress
from cloudtrain.following.status_line import LiveStatus

__all__ = ["FollowPrinter", "finish", "follow", "masked_lines", "print_detached", "print_hints"]

#: What each step of a cancel on Ctrl-C prints (after ``Cancelling job …``'s own line).
_STOP_WORDS: dict[StopStep, str] = {
    "saving": "\n[yellow]stopping: saving a checkpoint… (Ctrl-C again to kill now)[/yellow]",
    "stopping": "\n[yellow]stopping every replica (SIGTERM; Ctrl-C again to kill now)[/yellow]",
    "killing": "[yellow]killing every replica now[/yellow]",
}


class FollowPrinter:
    """A followed job as the CLI prints it (:class:`cloudtrain.app.follow.FollowView`): lines by replica (or
    ``show_line``), a live status line, a cancel's steps, the summary; DEBUG only with ``debug``."""

    def __init__(
        self,
        console: Console,
        progress: Progress,
        *,
        live: bool = True,
        output: str = "text",
        debug: bool = False,
        show_line: Show | None = None,
    ) -> None:
        self.console, self.progress, self.output = console, progress, output
        self.show: Show = show_line or ReplicaPrinter(console, show_debug=debug, epochs=progress.epochs)
        self.drawn = live and output != "json" and console.is_terminal  # never on a pipe, never with -o json

    def line(self, line: LogLine) -> None:
        self.show(line)

    def live(self) -> AbstractContextManager[Show] | None:
        return LiveStatus(self.console, self.progress, self.show) if self.drawn else None

    def stopping(self, step: StopStep, handle: JobHandle) -> None:
        print_stop(self.console, step, handle)

    def finished(self, status: JobStatus, outcome: Outcome) -> None:
        print_outcome(self.console, status, outcome, self.output)


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
    """Stream logs until the job ends (:class:`FollowPrinter`) and exit with its outcome; Ctrl-C detaches or cancels. An
    outage the backend's follower gives up on exits 3, never 1 (a failed job's)."""
    watched = progress or watch_progress(handle)
    view = FollowPrinter(console, watched, live=live, output=output, debug=debug, show_line=show_line)
    try:
        follow_to_end(handle, view, watched, cancel_on_interrupt=cancel_on_interrupt, drain=drain)
    except Detached as detached:
        print_detached(console, detached.job_id, detached.reattach)
        raise SystemExit(130) from None


def _cancel(console: Console, handle: JobHandle, *, show: Show, shown: int) -> JobStatus:
    """Cancel as a Ctrl-C while following does (:func:`cloudtrain.app.follow.cancel_job`), printing each step."""
    return cancel_job(handle, show=show, shown=shown, on_stop=lambda step: print_stop(console, step, handle))


def print_stop(console: Console, step: StopStep, handle: JobHandle) -> None:
    if step == "cancelling":
        console.print(f"\n[yellow]Cancelling job {handle.job_id}…[/yellow]")
    else:
        console.print(_STOP_WORDS[step])


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
    """:func:`print_outcome` of the run's summary (:func:`cloudtrain.app.outcome.summarise`)."""
    print_outcome(console, status, summarise(status, progress, handle), output)


def print_outcome(console: Console, status: JobStatus, outcome: Outcome, output: str = "text") -> None:
    """Print the summary and the run's phases (and with ``-o json`` the status on stdout), kept in
    history by the app layer; exit with the state's code from the one table (errors.ExitCode)."""
    print_kv(console, f"Job {status.job_id}: {status.state.value}", outcome.rows)
    if output == "json":
        print_json(status.to_dict())
    if error := outcome.error():
        raise error
