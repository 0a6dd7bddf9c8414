"""The part of ``cloudtrain submit`` after the summary when a job is created: print where it (or its sweep) landed and
follow it to its end. Not loaded by ``--dry-run``."""

from __future__ import annotations

from cloudtrain.app.launch import Launched
from cloudtrain.cli._follow import FollowPrinter, print_detached, print_hints
from cloudtrain.cli._summary import print_summary
from cloudtrain.cli.sweep import submit_sweep
from cloudtrain.console import Console

__all__ = ["FollowPrinter", "print_created", "print_detached", "print_hints", "submit_sweep"]


def print_created(console: Console, launched: Launched, *, here: bool) -> None:
    """Where the job landed (a fallback's summary), and its id: a run here, or a cloud job and its page."""
    if launched.index:
        console.print(f"[bold]Landed on fallback {launched.index}[/bold]:")
        print_summary(console, launched.spec, launched.package)
    handle, first = launched.handle, launched.first
    if here:
        console.print(f"[bold]Run[/bold] {handle.job_id} started in {first.name}")
    else:
        console.print(
            f"[bold]Job[/bold] {handle.job_id} created" + (f": {first.console_url}" if first.console_url else "")
        )
