"""Submit a prepared job (the main request, then its fallbacks) and record it in history; nothing is followed here."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from cloudtrain import creation_window
from cloudtrain.app.fallback import first_with_capacity
from cloudtrain.app.follow import FollowView, follow_to_end, watch_progress
from cloudtrain.app.notices import Detached, Notice, Notify, ignore
from cloudtrain.app.prepare import Prepared
from cloudtrain.app.reattach import reattach_command, reattach_hint
from cloudtrain.backend_rules import Capability
from cloudtrain.backends import get_backend
from cloudtrain.backends.base import JobHandle, JobStatus
from cloudtrain.backends.secrets_here import check_exist
from cloudtrain.creation_window import CreatedThenInterrupted
from cloudtrain.following.progress import Progress
from cloudtrain.history import JobRecord, record
from cloudtrain.secrets.masking import ValueMasker, secret_values
from cloudtrain.spec import JobSpec


@dataclass(frozen=True)
class Launched:
    """A created job: its handle, the candidate it landed on (0: the main request) and its first status."""

    handle: JobHandle
    spec: JobSpec
    package: Any
    first: JobStatus
    index: int


def launch(
    prepared: Prepared,
    *,
    notify: Notify = ignore,
    backend_of: Callable[[str], Any] = get_backend,
    detach: bool = False,
) -> Launched:
    """Create the job (trying the ``fallback:`` entries on no capacity) and record it; ``detach``: none here follows it.
    A Ctrl-C after the backend began creating the job is held until it is recorded, then raised as
    :class:`CreatedThenInterrupted` carrying the :class:`Launched`."""
    spec, package = prepared.spec, prepared.package
    check_secrets_exist(spec, notify)
    if len(prepared.candidates) > 1 or prepared.loaded.config.max_queue is not None:
        landed = first_with_capacity(
            prepared.candidates,
            package,
            notify=notify,
            backend_of=backend_of,
            max_queue_s=prepared.loaded.config.max_queue,
            detach=detach,
        )
        launched = Launched(landed.handle, landed.spec, landed.package, landed.status, landed.index)
    else:
        backend = backend_of(spec.backend)
        with creation_window.window() as held:  # a backend holds Ctrl-C from its create call to here
            handle = (backend.submit_detached if detach else backend.submit)(spec, package)
            with reattach_hint(handle.job_id):
                launched = Launched(handle, spec, package, handle.status(), 0)
            remember(launched, prepared)
        if held.caught:
            raise CreatedThenInterrupted(launched)
        return launched
    remember(launched, prepared)
    return launched


def create(prepared: Prepared, *, notify: Notify = ignore, detach: bool = False) -> Launched:
    """:func:`launch` for the Python API: every notice is also kept on ``prepared.notices`` (it returns them)."""

    def keep(notice: Notice) -> None:
        prepared.notices.append(notice)
        notify(notice)

    return launch(prepared, notify=keep, detach=detach)


def remember(launched: Launched, prepared: Prepared, kind: str = "job") -> None:
    """This machine's history, so ``cloudtrain logs ID`` finds the job from any directory."""
    spec = launched.spec
    mask = ValueMasker(secret_values(spec.env, spec.args, spec.hyperparameters))
    record(
        JobRecord(
            launched.handle.job_id,
            launched.first.name,
            spec.backend,
            spec.region,
            spec.project,
            str(prepared.loaded.file.resolve()),
            created=spec.created.isoformat(),
            kind=kind,
            experiment=spec.experiment,
            args=[mask(a) for a in spec.module_args()],
        )
    )


class LaunchView(Protocol):
    """Who is told what creating and following a job does (the CLI prints each; nothing here does)."""

    def notice(self, notice: Notice) -> None:
        """A warning, or a move between fallback candidates."""

    def created(self, launched: Launched, *, here: bool) -> None:
        """The job exists (``here``: it runs on this machine), on the candidate it landed on."""

    def detached(self, launched: Launched, reattach: str) -> None:
        """``--detach``: the job runs on; ``reattach`` follows it again."""

    def follower(self, progress: Progress) -> FollowView:
        """Who is shown the job while it is followed to its end (:func:`cloudtrain.app.follow.follow_to_end`)."""


def launch_and_follow(
    prepared: Prepared,
    view: LaunchView,
    *,
    detach: bool = False,
    cancel_on_interrupt: bool = False,
    drain: float | None = None,
) -> None:
    """Create the job of ``prepared`` and follow it to its end unless ``detach``; a Ctrl-C while it is created raises
    :class:`~cloudtrain.app.notices.Detached` once recorded (``cancel_on_interrupt``: cancelled, then followed)."""
    try:
        launched = launch(prepared, notify=view.notice, detach=detach)
    except CreatedThenInterrupted as interrupted:  # Ctrl-C while the job was being created: it is recorded
        launched, handle = interrupted.created, interrupted.created.handle
        if detach or not cancel_on_interrupt:
            raise Detached(handle.job_id, reattach_command(handle, drain), just_created=True) from None
        handle.cancel()  # --cancel-on-interrupt holds then too: followed below to its CANCELLED end
    capabilities = get_backend(launched.spec.backend).facts.capabilities
    here = Capability.RUNS_HERE in capabilities
    view.created(launched, here=here)
    if detach:
        view.detached(launched, reattach_command(launched.handle, drain))
        return
    billed = Capability.BILLED in capabilities  # its price, epochs and phases watched
    progress = watch_progress(launched.handle, launched.spec, billed=billed, first=launched.first)
    # a run here dies with this process: Ctrl-C cancels it
    follow_to_end(
        launched.handle, view.follower(progress), progress, cancel_on_interrupt=cancel_on_interrupt or here, drain=drain
    )


def check_secrets_exist(spec: JobSpec, notify: Notify = ignore) -> None:
    """Before creating a cloud job: each secret it names exists (a local run reads them, which is the check)."""
    if not spec.secrets or Capability.RUNS_HERE in get_backend(spec.backend).facts.capabilities:
        return
    check_exist(spec.secrets, os.environ, warn=lambda line: notify(Notice("warning", line)))
