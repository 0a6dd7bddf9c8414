"""The phases of a local environment build, told while they run: one static line for minutes looks like a hang.

On a terminal a live line shows the phase, its time and the environment's size; otherwise each phase is one line when
it ends. Either way the end of each phase goes to ``log``, where the backend's other notices go."""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from cloudtrain.text.numbers import human_seconds, measured, size

Log = Callable[[str], None]


def folder_bytes(folder: Path) -> int:
    """What the files under ``folder`` hold (links not followed); files that vanish meanwhile count 0."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


@contextmanager
def phase(what: str, log: Log | None, *, folder: Path | None = None, live: bool | None = None) -> Iterator[list[str]]:
    """Run one phase under a live line (a terminal) and log its end: ``what: <details> in <elapsed>``. The caller
    may append details to the yielded list; ``folder``'s size is added. A phase that raises logs nothing."""
    details: list[str] = []
    start = time.monotonic()
    stop = threading.Event()
    status = _live_line(what, folder, start, stop) if (sys.stderr.isatty() if live is None else live) else None
    try:
        yield details
    finally:
        stop.set()
        if status is not None:
            status.join()
    if folder is not None and folder.exists():
        details.append(size(folder_bytes(folder)))
    if log:
        log(
            f"{what}: {', '.join(details)} in {seconds_text(time.monotonic() - start)}"
            if details
            else f"{what} in {seconds_text(time.monotonic() - start)}"
        )


def seconds_text(seconds: float) -> str:
    """``4.2 s`` under a minute (4 significant digits), ``1 min 47 s`` above."""
    return f"{measured(round(seconds, 1))} s" if seconds < 60 else human_seconds(seconds)


def _live_line(what: str, folder: Path | None, start: float, stop: threading.Event) -> threading.Thread:
    """A thread that redraws ``what · 35 s · 412.3 MiB`` on stderr until ``stop``; rich draws it."""
    from rich.console import Console

    def run() -> None:
        with Console(stderr=True).status(what) as status:
            while not stop.wait(1.0):
                grown = f" · {size(folder_bytes(folder))}" if folder is not None and folder.exists() else ""
                status.update(f"{what} · {seconds_text(time.monotonic() - start)}{grown}")

    thread = threading.Thread(target=run, name="build-progress", daemon=True)
    thread.start()
    return thread


#: uv's own summary lines (stderr): what it resolved, downloaded (prepared) and installed, and how long each took.
_UV_STEP = re.compile(r"^(Resolved|Prepared|Installed) (\d+) packages? in (?:(\d+)m )?([\d.]+)(m?s)\b", re.M)
#: pip's download lines: ``Downloading tensorflow-2.18.0-….whl (615.3 MB)``.
_PIP_DOWNLOAD = re.compile(r"Downloading \S+ \(([\d.]+) (kB|MB|GB)\)")


def uv_steps(output: str) -> dict[str, tuple[int, float]]:
    """uv's ``Prepared 14 packages in 1m 35s``-style lines: step → (packages, seconds)."""
    steps = {}
    for verb, count, minutes, value, unit in _UV_STEP.findall(output):
        seconds = float(value) / (1000 if unit == "ms" else 1) + 60 * int(minutes or 0)
        steps[verb.lower()] = (int(count), seconds)
    return steps


def pip_downloaded_bytes(output: str) -> int:
    """The sum of pip's ``Downloading … (615.3 MB)`` sizes."""
    scale = {"kB": 10**3, "MB": 10**6, "GB": 10**9}
    return int(sum(float(value) * scale[unit] for value, unit in _PIP_DOWNLOAD.findall(output)))
