"""The live status line at the bottom of a terminal, never with ``-o json``; rich's ``Live`` redraws it twice a second,
so elapsed time and cost move even while no line arrives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cloudtrain.following.progress import Progress


class LiveStatus:
    def __init__(self, console: Any, progress: Progress, printer: Callable[[Any], None]):
        self.console, self.progress, self.printer = console, progress, printer
        self._live: Any = None

    def __enter__(self) -> LiveStatus:
        from rich.live import Live
        from rich.text import Text

        class Line:
            def __init__(self, progress: Progress):
                self.progress = progress

            def __rich__(self) -> Text:
                return Text(self.progress.snapshot().line(), style="bold reverse", no_wrap=True, overflow="ellipsis")

        self._live = Live(
            Line(self.progress),
            console=self.console,
            refresh_per_second=2,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._live.__exit__(*exc)

    def __call__(self, line: Any) -> None:
        self.progress(line)
        self.printer(line)
