"""The part of ``cloudtrain submit`` after the summary when a job is created: launch it (or its sweep), print
where it landed, and follow it to its end unless detached. Not loaded by ``--dry-run``."""

from __future__ import annotations

from collections.abc import Callable

from cloudtrain.app.launch import launch
from cloudtrain.app.notices import Notice
from cloudtrain.app.prepare import Prepared
from cloudtrain.app.reattach import reattach_command
from cloudtrain.backend_rules import Capability
from cloudtrain.backends import get_backend
from cloudtrain.cli._follow import follow, print_hints
from cloudtrain.cli._group import debug_enabled
from cloudtrain.cli._summary import print_summary
from cloudtrain.cli.sweep import submit_sweep
from cloudtrain.console import Console, print_json
from cloudtrain.creation_window import CreatedThenInterrupted
from cloudtrain.events import epochs_in_args
from cloudtrain.progress import Progress


def launch_and_follow(
    console: Console,
    prepared: Prepared,
    *,
    notify: Callable[[Notice], None],
    detach: bool,
    cancel_on_interrupt: bool,
    output: str,
    drain: float | None,
) -> None:
    """Create the job of ``prepared`` (the first candidate with capacity) and follow it unless ``detach``."""
    if prepared.spec.sweep is not None:
        submit_sweep(console, prepared, detach=detach, output=output)
        return
    try:
        launched = launch(prepared, notify=notify, detach=detach)
    except CreatedThenInterrupted as interrupted:  # Ctrl-C while the job was being created: it is recorded
        handle = interrupted.created.handle
        console.print(f"[bold]Job[/bold] {handle.job_id} created")
        console.print(f"\n[yellow]Detached; job {handle.job_id} keeps running.[/yellow]")
        print_hints(console, handle.job_id, reattach_command(handle, drain))
        raise SystemExit(130) from None
    if launched.index:
        console.print(f"[bold]Landed on fallback {launched.index}[/bold]:")
        print_summary(console, launched.spec, launched.package)
    handle, spec, first = launched.handle, launched.spec, launched.first
    backend = get_backend(spec.backend)
    if Capability.RUNS_HERE in backend.capabilities:
        console.print(f"[bold]Run[/bold] {handle.job_id} started in {first.name}")
    else:
        console.print(
            f"[bold]Job[/bold] {handle.job_id} created" + (f": {first.console_url}" if first.console_url else "")
        )
    if detach:
        print_hints(console, handle.job_id, reattach_command(handle, drain))
        if output == "json":
            print_json(first.to_dict())
        return
    progress = Progress(
        cost_per_hour=spec.cost_per_hour if Capability.BILLED in backend.capabilities else None,
        started=spec.created.timestamp(),
        epochs=epochs_in_args(spec.module_args()),
    )
    progress.start_from(first)
    follow(
        console,
        handle,
        # a run here dies with this process
        cancel_on_interrupt=cancel_on_interrupt or Capability.RUNS_HERE in backend.capabilities,
        progress=progress,
        live=output != "json",
        output=output,
        debug=debug_enabled(),
        drain=drain,
    )
