"""What both clouds' log followers share: late marking, the outage lines, backoff with jitter.

:class:`LateMarker` shows lines that arrive together in timestamp order per replica, and an older one than already
shown at once, marked ``late``. :class:`Outage` retries transient trouble with capped exponential backoff and full
jitter, one line when it starts and one when it ends; only an outage longer than ``give_up_after`` ends the follow
(:class:`~cloudtrain.errors.CloudUnreachable`, exit 3)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
from collections.abc import Callable, Iterable

from cloudtrain.backends.base import LogLine
from cloudtrain.backoff import Backoff
from cloudtrain.errors import CloudUnreachable
from cloudtrain.text import first_line

log = logging.getLogger("cloudtrain.logs")
Notify = Callable[[str], None]


def default_notify(message: str) -> None:
    log.warning(message)


def event_waiter(sleep: Callable[[float], None] | None) -> Callable[[threading.Event, float], bool]:
    """How a follower waits for ``seconds`` or until woken: on the event in real time; with an
    injected ``sleep`` (a virtual clock) by sleeping, since nothing else moves that clock."""
    if sleep is None:
        return lambda event, seconds: event.wait(max(seconds, 0.0))

    def wait(event: threading.Event, seconds: float) -> bool:
        if not event.is_set() and seconds > 0:
            sleep(seconds)
        return event.is_set()

    return wait


class LateMarker:
    """Per replica, the newest timestamp shown; lines older than it are marked late."""

    def __init__(self) -> None:
        self.newest: dict[str, dt.datetime] = {}
        self.late = 0

    def batch(self, lines: Iterable[LogLine]) -> list[LogLine]:
        """Lines that arrived together, in timestamp order (stable per replica), marked."""
        out = []
        for line in sorted(lines, key=lambda each: each.timestamp):
            newest = self.newest.get(line.replica)
            if newest is not None and line.timestamp < newest:
                line = dataclasses.replace(line, late=True)
                self.late += 1
            else:
                self.newest[line.replica] = line.timestamp
            out.append(line)
        return out


class Outage:
    """Tracks one follower's connection to the cloud; says when it is lost and when it is back."""

    def __init__(
        self,
        what: str,
        *,
        clock: Callable[[], float],
        notify: Notify = default_notify,
        backoff: Backoff | None = None,
        give_up_after: float = 24 * 3600.0,
        reattach: str = "",
    ):
        self.what, self.clock, self.notify = what, clock, notify
        self.backoff = backoff or Backoff()
        self.give_up_after, self.reattach = give_up_after, reattach
        self.since: float | None = None
        self.failures = 0
        self.outages = 0  # how many times the connection was lost (for tests and benches)
        self.back_at: list[float] = []  # clock times the connection came back

    @property
    def down(self) -> bool:
        return self.since is not None

    def failed(self, exc: BaseException) -> float:
        """Note a transient failure; return how long to wait before the next try."""
        now = self.clock()
        if self.since is None:
            self.since, self.outages = now, self.outages + 1
            self.notify(f"lost the connection to {self.what} ({first_line(exc, 200)}); retrying — no line will be lost")
        self.failures += 1
        if now - self.since > self.give_up_after:
            hint = f"the job may still be running; reattach with: {self.reattach}" if self.reattach else None
            raise CloudUnreachable(
                f"could not reach {self.what} for {now - self.since:.0f} s: {first_line(exc, 200)}", hint
            ) from exc
        return self.backoff.delay(self.failures)

    def ok(self) -> None:
        if self.since is not None:
            now = self.clock()
            self.notify(f"connection to {self.what} is back after {now - self.since:.0f} s; catching up")
            self.back_at.append(now)
        self.since, self.failures = None, 0
