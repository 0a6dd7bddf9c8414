"""Try the candidates in order until one gets machines: the main request, then each ``fallback:`` entry. Only capacity
or quota (:mod:`cloudtrain.catalog.capacity`) moves on; none had capacity: :class:`~cloudtrain.errors.NoCapacity`."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cloudtrain.app.notices import Notice, Notify, ignore
from cloudtrain.app.prepare import build_package
from cloudtrain.backends import get_backend
from cloudtrain.backends.base import Backend, JobHandle, JobState, JobStatus
from cloudtrain.catalog.capacity import classify
from cloudtrain.errors import CloudtrainError, NoCapacity
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec
from cloudtrain.text import first_line


@dataclass(frozen=True)
class Landed:
    handle: JobHandle
    spec: JobSpec
    package: BuiltPackage | None  # None for a ``container:`` job
    status: JobStatus  # the first status: RUNNING (or later) when candidates were watched, else just created
    index: int  # 0: the main request; n: fallback entry n


def describe(spec: JobSpec) -> str:
    gpus = spec.machine.accelerators if spec.machine.accelerator_count else "CPU"
    spot = ", spot" if spec.spot else ", flex-start" if getattr(spec, "flex_start", False) else ""
    return f"{spec.backend} {spec.region} {spec.replica_count} × {spec.machine.type} ({gpus}{spot})"


def first_with_capacity(
    specs: Sequence[JobSpec],
    package: BuiltPackage | None,
    *,
    notify: Notify = ignore,
    max_queue_s: float | None = None,
    poll_s: float = 15.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    backend_of: Callable[[str], Backend] = get_backend,
    detach: bool = False,
) -> Landed:
    """Submit ``specs[0]`` with ``package``, then each fallback until one gets machines. ``backend_of``: a name's
    backend (tests inject theirs); ``detach``: nobody here follows the job."""

    def echo(text: str) -> None:
        notify(Notice("fallback", text))

    reasons: list[str] = []
    for index, spec in enumerate(specs):
        if index:
            echo(f"trying fallback {index}: {describe(spec)}")
            for note in getattr(spec, "notes", ()):
                echo(f"  {note}")
            package = build_package(spec, notify)
        backend = backend_of(spec.backend)
        try:
            handle = (backend.submit_detached if detach else backend.submit)(spec, package)
        except CloudtrainError as exc:
            kind = classify(spec.cloud, str(exc), _reasons(exc))
            if kind not in ("capacity", "quota"):
                raise
            reasons.append(_moving(echo, spec, kind, str(exc), last=index == len(specs) - 1))
            continue
        if len(specs) == 1 and max_queue_s is None:
            return Landed(handle, spec, package, handle.status(), index)
        status, why = _watch_start(handle, spec, max_queue_s, poll_s, sleep, clock)
        if why is None:
            return Landed(handle, spec, package, status, index)
        reasons.append(_moving(echo, spec, why[0], why[1], last=index == len(specs) - 1))
    raise NoCapacity(
        "no candidate got capacity or quota: " + "; ".join(reasons),
        hint="add fallback entries (other regions, machines or the other cloud), or try later",
    )


def _watch_start(
    handle: JobHandle,
    spec: JobSpec,
    max_queue_s: float | None,
    poll_s: float,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> tuple[JobStatus, tuple[str, str] | None]:
    """Poll until the job runs (landed), fails for capacity (move on), or stays queued past the limit
    (cancel, move on). Any other end is the job's own and is returned as landed, to be reported."""
    started = clock()
    while True:
        status = handle.status()
        if status.state in (JobState.RUNNING, JobState.SUCCEEDED):
            return status, None
        if status.state.terminal:
            kind = classify(spec.cloud, status.message or "")
            if kind in ("capacity", "quota") and status.state is JobState.FAILED:
                return status, (kind, status.message or status.native_state)
            return status, None
        if max_queue_s is not None and clock() - started > max_queue_s:
            handle.cancel()
            return status, (
                "capacity",
                f"still {status.native_state} after {int(max_queue_s)} s (max_queue); cancelled",
            )
        sleep(poll_s)


def _moving(echo: Callable[[str], None], spec: JobSpec, kind: str, message: str, *, last: bool) -> str:
    short = first_line(message, 300) or kind
    reason = f"{describe(spec)}: no {kind}: {short}"
    echo(reason + ("" if last else "; moving on"))
    return reason


def _reasons(exc: BaseException) -> list[str]:
    """Google's ErrorInfo reason of the API error behind a BackendError, where there is one."""
    cause = exc.__cause__
    reason = getattr(cause, "reason", None)
    return [reason] if reason else []
