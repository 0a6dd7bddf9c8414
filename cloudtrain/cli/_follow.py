"""Streaming a job's logs to its end and turning its outcome into the exit code."""

from __future__ import annotations

import contextlib
from typing import Iterator


def follow(console, handle, *, cancel_on_interrupt: bool, progress=None, live: bool = True, output: str = "text",
           debug: bool = False, drain: float | None = None, show_line=None) -> None:  # fmt: skip
    """Stream logs until the job ends; exit with its outcome. Ctrl-C detaches or cancels.

    With ``progress`` (a :class:`cloudtrain.progress.Progress`) and a terminal, a live status line
    stays at the bottom; the run's phases are printed at the end and kept in history. DEBUG lines
    (a local run's TensorFlow start-up noise) are shown only with ``debug``. Cloud trouble while
    following (5xx, throttling, refused connections) is retried by the backend's follower; only an
    outage it gives up on ends here, with exit code 3, never 1 (kept for a job that failed).
    ``drain``: the stop rule's quiet period (``--drain``), None for the backend's default.
    ``show_line``: prints each line instead of the replica printer (``logs -o json``: a JSON object
    per line on stdout, while ``console`` gets the summary and the outcome the same way as text)."""
    from cloudtrain.console import ReplicaPrinter

    progress = progress or _progress_of(handle)
    printer = show_line or ReplicaPrinter(console, show_debug=debug, epochs=progress.epochs)
    sink = lambda line: (progress(line), printer(line))  # noqa: E731
    shown = contextlib.nullcontext(sink)
    if live and output != "json" and console.is_terminal:  # never on a pipe, never with -o json
        from cloudtrain.live import LiveStatus

        shown = LiveStatus(console, progress, printer)
    count = 0  # lines shown so far: after a Ctrl-C the grace period's lines follow on from here
    try:
        with reattach_hint(handle.job_id, reattach_command(handle, drain)), shown as show:
            for line in handle.logs(follow=True, **drain_kwargs(drain)):
                show(line)
                count += 1
            status = handle.wait()
    except KeyboardInterrupt:
        if not cancel_on_interrupt:
            console.print(f"\n[yellow]Detached; job {handle.job_id} keeps running.[/yellow]")
            print_hints(console, handle.job_id, reattach_command(handle, drain))
            raise SystemExit(130) from None
        status = _cancel(console, handle, show=sink, shown=count)
    _check_model_outputs(handle, status)
    finish(console, status, progress, output=output)


def _cancel(console, handle, *, show, shown: int):
    """Cancel; a local run's replicas get SIGTERM and save a checkpoint, and a second Ctrl-C kills them at once.

    While a local run's replicas save, their lines ("saved at step N") are shown as they come:
    the cancel waits in a thread, and the lines after the ``shown`` already printed are followed here."""
    kill = getattr(handle, "kill", None)
    if kill is None:
        console.print(f"\n[yellow]Cancelling job {handle.job_id}…[/yellow]")
        handle.cancel()
        return handle.wait()
    console.print("\n[yellow]stopping: saving a checkpoint… (Ctrl-C again to kill now)[/yellow]")
    import itertools
    import threading

    stopping = threading.Thread(target=handle.cancel, name="cancel", daemon=True)
    stopping.start()
    try:
        for line in itertools.islice(handle.logs(follow=True), shown, None):  # ends when every replica has
            show(line)
        stopping.join()
        return handle.wait()
    except KeyboardInterrupt:
        console.print("[yellow]killing every replica now[/yellow]")
        return kill()


def _progress_of(handle):
    """For a reattach (``logs --follow``): the job's own creation time and phase; no price is known."""
    import time

    from cloudtrain.progress import Progress, phase_of

    status = handle.status()
    progress = Progress(cost_per_hour=None, started=status.created.timestamp() if status.created else time.time())
    progress.set_phase(phase_of(status))
    return progress


@contextlib.contextmanager
def reattach_hint(job_id: str, command: str | None = None) -> Iterator[None]:
    """The cloud stopped answering after the job was created: it may still run; say how to reattach."""
    from cloudtrain.errors import CloudUnreachable

    try:
        yield
    except CloudUnreachable as exc:
        exc.hint = f"the job may still be running; reattach: {command or f'cloudtrain logs {job_id} --follow'}"
        raise


def drain_kwargs(drain: float | None) -> dict:
    """``drain`` for ``JobHandle.logs`` only when given: handles without a stop rule need not take it."""
    return {} if drain is None else {"drain": drain}


def reattach_command(handle, drain: float | None = None) -> str:
    """The exact command that follows this job again, from any directory."""
    parts = ["cloudtrain", "logs", handle.job_id, "--follow"]
    backend = getattr(handle, "backend_name", None)
    if backend and backend != "local":
        parts += ["--backend", backend, "--region", handle.region]
        if getattr(handle, "project", None):
            parts += ["--project", handle.project]
    if drain is not None:
        parts += ["--drain", f"{drain:g}s"]
    return " ".join(parts)


def print_hints(console, job_id: str, reattach: str | None = None) -> None:
    console.print(f"  reattach: {reattach or f'cloudtrain logs {job_id} --follow'}", markup=False)
    console.print(f"  cancel:   cloudtrain cancel {job_id}")


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
