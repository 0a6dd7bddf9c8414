"""Ctrl-C held between "the job exists" and "this machine has recorded it": no orphan jobs. Inside a :func:`window`,
from a backend's :func:`hold` on, SIGINT, SIGTERM and SIGHUP are kept, and raised as :class:`CreatedThenInterrupted`
when the window closes. Outside a window, or off the main thread, nothing is held."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # SIGHUP: the terminal closed


class CreatedThenInterrupted(KeyboardInterrupt):
    """An interrupt that came while a job was being created and recorded; ``created``: what was."""

    def __init__(self, created: Any):
        super().__init__("interrupted after the job was created")
        self.created = created


class Window:
    def __init__(self) -> None:
        self.open = False
        self.caught: list[int] = []
        self._previous: dict[int, Any] = {}

    def hold(self) -> None:
        if not self.open or self._previous or threading.current_thread() is not threading.main_thread():
            return

        def keep(signum: int, _frame: FrameType | None) -> None:
            self.caught.append(signum)

        for signum in _SIGNALS:
            self._previous[signum] = signal.signal(signum, keep)

    def release(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()


class _Open(threading.local):
    """The window each thread is in (submits from several threads of one program each have their own)."""

    current: Window | None = None


_open = _Open()


@contextlib.contextmanager
def window() -> Iterator[Window]:
    """The span of one submit and its record; ``Window.caught`` lists the signals held in it."""
    outer, mine = _open.current, Window()
    mine.open = True
    _open.current = mine
    try:
        yield mine
    finally:
        mine.release()
        mine.open = False
        _open.current = outer


def hold() -> None:
    """From now until the window closes, keep SIGINT/SIGTERM: the job is about to exist."""
    if _open.current is not None:
        _open.current.hold()
