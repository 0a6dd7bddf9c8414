"""Streaming a job's logs to its end and turning its outcome into the exit code."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager

from cloudtrain.app.outcome import summarise
from cloudtrain.app.reattach import drain_kwargs, reattach_command, reattach_hint
from cloudtrain.backends.base import JobHandle, JobStatus, LogLine
from cloudtrain.console import Console, ReplicaPrinter, print_json, print_kv
from cloudtrain.live import LiveStatus
from cloudtrain.progress import Progress
from cloudtrain.secrets.masking import ValueMasker

Show = Callable[[LogLine], None]


def masked_lines(lines: Iterable[LogLine]) -> Iterator[LogLine]:
    """A job's lines with every credential its code printed shown as ``***``: each replica's lines are one
    stream, so a private key is masked from its BEGIN line to its END line (what the cloud's log service
    holds is the job's own business; cloudtrain does not show it)."""
    streams: dict[str, Callable[[str], str]] = {}
    for line in lines:
        mask = streams.get(line.replica) or streams.setdefault(line.replica, ValueMasker(()).stream())
        text = mask(line.message)
        yield line if text == line.message else dataclasses.replace(line, message=text)


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

    With ``progress`` (a :class:`cloudtrain.progress.Progress`) and a terminal, a live status line
    stays at the bottom; the run's phases are printed at the end and kept in history. DEBUG lines
    (a local run's TensorFlow start-up noise) are shown only with ``debug``. Cloud trouble while
    following (5xx, throttling, refused connections) is retried by the backend's follower; only an
    outage it gives up on ends here, with exit code 3, never 1 (kept for a job that failed).
    ``drain``: the stop rule's quiet period (``--drain``), None for the backend's default.
    ``show_line``: prints each line instead of the replica printer (``logs -o json``: a JSON object
    per line on stdout, while ``console`` gets the summary and the outcome the same way as text)."""
    watched = progress or _progress_of(handle)
    printer: Show = show_line or ReplicaPrinter(console, show_debug=debug, epochs=watched.epochs)

    def sink(line: LogLine) -> None:
        watched(line)
        printer(line)

    shown: AbstractContextManager[Show] = contextlib.nullcontext(sink)
    if live and output != "json" and console.is_terminal:  # never on a pipe, never with -o json
        shown = LiveStatus(console, watched, printer)
    count = 0  # lines shown so far: after a Ctrl-C the grace period's lines follow on from here
    try:
        with reattach_hint(handle.job_id, reattach_command(handle, drain)), shown as show:
            for line in masked_lines(handle.logs(follow=True, **drain_kwargs(drain))):
                show(line)
                count += 1
            status = handle.wait()
    except KeyboardInterrupt:
        if not cancel_on_interrupt:
            console.print(f"\n[yellow]Detached; job {handle.job_id} keeps running.[/yellow]")
            print_hints(console, handle.job_id, reattach_command(handle, drain))
            raise SystemExit(130) from None
        status = _cancel(console, handle, show=sink, shown=count)
    finish(console, status, watched, output=output, handle=handle)


def _cancel(console: Console, handle: JobHandle, *, show: Show, shown: int) -> JobStatus:
    """Cancel; a local run's replicas get SIGTERM and save a checkpoint, and a second Ctrl-C kills them at once.

    While a local run's replicas save, their lines ("saved at step N") are shown as they come:
    the cancel waits in a thread, and the lines after the ``shown`` already printed are followed here."""
    if not handle.stops_gracefully:
        console.print(f"\n[yellow]Cancelling job {handle.job_id}…[/yellow]")
        handle.cancel()
        return handle.wait()
    if getattr(handle, "saves_on_stop", True):
        console.print("\n[yellow]stopping: saving a checkpoint… (Ctrl-C again to kill now)[/yellow]")
    else:  # a package that has saved nothing so far and did not say it saves on SIGTERM: no save is promised
        console.print("\n[yellow]stopping every replica (SIGTERM; Ctrl-C again to kill now)[/yellow]")
    stopping = threading.Thread(target=handle.cancel, name="cancel", daemon=True)
    stopping.start()
    try:
        for line in itertools.islice(handle.logs(follow=True), shown, None):  # ends when every replica has
            show(line)
        stopping.join()
        return handle.wait()
    except KeyboardInterrupt:
        console.print("[yellow]killing every replica now[/yellow]")
        return handle.kill()


def _progress_of(handle: JobHandle) -> Progress:
    """For a reattach (``logs --follow``): the job's own creation time and phase; no price is known."""
    status = handle.status()
    progress = Progress(cost_per_hour=None, started=status.created.timestamp() if status.created else time.time())
    progress.start_from(status)
    return progress


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
