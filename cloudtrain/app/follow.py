"""Follow a job to its end for ``submit``, ``logs --follow`` and the API: lines (credentials masked) to ``show``, Ctrl-C
turned into a detach (:class:`Detached`) or a cancel reported through ``on_stop``. Nothing here prints."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Literal, Protocol

from cloudtrain.app.notices import Detached
from cloudtrain.app.outcome import Outcome, summarise
from cloudtrain.app.reattach import drain_kwargs, reattach_command, reattach_hint
from cloudtrain.backends.base import JobHandle, JobStatus, LogLine
from cloudtrain.following.events import epochs_in_args
from cloudtrain.following.progress import Progress
from cloudtrain.secrets.masking import ValueMasker
from cloudtrain.spec import JobSpec

Show = Callable[[LogLine], None]

#: The steps of a cancel on Ctrl-C: "cancelling", "saving" or "stopping" replicas, then "killing" on a second.
StopStep = Literal["cancelling", "saving", "stopping", "killing"]


def watch_progress(
    handle: JobHandle, spec: JobSpec | None = None, *, billed: bool = False, first: JobStatus | None = None
) -> Progress:
    """The one place a job's :class:`~cloudtrain.following.progress.Progress` is set up: for a new job (``spec``) its
    price, creation and epochs; for a reattach its creation, no price; its phase from ``first``, else asked."""
    first = first or handle.status()
    if spec is not None:
        progress = Progress(
            cost_per_hour=spec.cost_per_hour if billed else None,
            started=spec.created.timestamp(),
            epochs=epochs_in_args(spec.module_args()),
        )
    else:
        progress = Progress(cost_per_hour=None, started=first.created.timestamp() if first.created else time.time())
    progress.start_from(first)
    return progress


class FollowView(Protocol):
    """Who is shown a followed job (the CLI prints each; nothing here does)."""

    def line(self, line: LogLine) -> None:
        """One of the job's lines, its credentials masked."""

    def live(self) -> AbstractContextManager[Show] | None:
        """A live status line while following (a context giving the sink), or None."""

    def stopping(self, step: StopStep, handle: JobHandle) -> None:
        """A step of a cancel on Ctrl-C."""

    def finished(self, status: JobStatus, outcome: Outcome) -> None:
        """The job ended: its final status and the summary of the run."""


def line_masker() -> Callable[[LogLine], LogLine]:
    """A job's line with printed credentials as ``***``; one stream per replica, so a key is masked BEGIN to END."""
    streams: dict[str, Callable[[str], str]] = {}

    def masked(line: LogLine) -> LogLine:
        mask = streams.get(line.replica) or streams.setdefault(line.replica, ValueMasker(()).stream())
        text = mask(line.message)
        return line if text == line.message else dataclasses.replace(line, message=text)

    return masked


def masked_lines(lines: Iterable[LogLine]) -> Iterator[LogLine]:
    """``lines`` through one :func:`line_masker`."""
    return map(line_masker(), lines)


def follow_to_end(
    handle: JobHandle, view: FollowView, progress: Progress, *, cancel_on_interrupt: bool, drain: float | None = None
) -> None:
    """Follow the job (:func:`follow_job`) feeding ``progress`` and ``view``, then hand ``view`` the final status and
    summary; a Ctrl-C without ``cancel_on_interrupt`` raises :class:`Detached`."""

    def show(line: LogLine) -> None:
        progress(line)
        view.line(line)

    status = follow_job(
        handle,
        show=show,
        display=view.live(),
        cancel_on_interrupt=cancel_on_interrupt,
        drain=drain,
        on_stop=lambda step: view.stopping(step, handle),
    )
    view.finished(status, summarise(status, progress, handle))


def follow_job(
    handle: JobHandle,
    *,
    show: Show,
    display: AbstractContextManager[Show] | None = None,
    cancel_on_interrupt: bool,
    drain: float | None = None,
    on_stop: Callable[[StopStep], None] = lambda step: None,
) -> JobStatus:
    """Stream the job's lines to ``show`` until it ends; return its final status. ``display``: a context giving the sink
    (a live status line). Ctrl-C raises :class:`Detached`, or with ``cancel_on_interrupt`` cancels; ``drain``: the stop
    rule's quiet period, None for the backend's."""
    shown = display if display is not None else contextlib.nullcontext(show)
    count = 0  # lines shown so far: after a Ctrl-C the grace period's lines follow on from here
    try:
        with reattach_hint(handle.job_id, reattach_command(handle, drain)), shown as sink:
            masked = line_masker()  # not masked_lines: the backend's logs run one frame below this
            for line in handle.logs(follow=True, **drain_kwargs(drain)):
                sink(masked(line))
                count += 1
            return handle.wait()
    except KeyboardInterrupt:
        if not cancel_on_interrupt:
            raise Detached(handle.job_id, reattach_command(handle, drain)) from None
        return cancel_job(handle, show=show, shown=count, on_stop=on_stop)


def cancel_job(
    handle: JobHandle, *, show: Show, shown: int, on_stop: Callable[[StopStep], None] = lambda step: None
) -> JobStatus:
    """Cancel; a local run's replicas save on SIGTERM, their lines going on to ``show``; a second Ctrl-C kills them."""
    if not handle.stops_gracefully:
        on_stop("cancelling")
        handle.cancel()
        return handle.wait()
    # a package that has saved nothing so far and did not say it saves on SIGTERM: no save is promised
    on_stop("saving" if getattr(handle, "saves_on_stop", True) else "stopping")
    stopping = threading.Thread(target=handle.cancel, name="cancel", daemon=True)
    stopping.start()
    try:
        for line in itertools.islice(handle.logs(follow=True), shown, None):  # ends when every replica has
            show(line)
        stopping.join()
        return handle.wait()
    except KeyboardInterrupt:
        on_stop("killing")
        return handle.kill()
