"""Streaming a job's logs to its end and turning its outcome into the exit code."""

from __future__ import annotations

def follow(console, handle, *, cancel_on_interrupt: bool) -> None:
    """Stream logs until the job ends; exit with its outcome. Ctrl-C detaches or cancels."""
    from cloudtrain.console import ReplicaPrinter

    printer = ReplicaPrinter(console)
    try:
        for line in handle.logs(follow=True):
            printer(line)
        status = handle.wait()
    except KeyboardInterrupt:
        if not cancel_on_interrupt:
            console.print(f"\n[yellow]Detached; job {handle.job_id} keeps running.[/yellow]")
            print_hints(console, handle.job_id)
            raise SystemExit(130) from None
        console.print(f"\n[yellow]Cancelling job {handle.job_id}…[/yellow]")
        handle.cancel()
        status = handle.wait()
    finish(console, status)


def print_hints(console, job_id: str) -> None:
    console.print(f"  reattach: cloudtrain logs {job_id} --follow")
    console.print(f"  cancel:   cloudtrain cancel {job_id}")


def finish(console, status) -> None:
    """Print the summary; exit 0 only on success, else the job's own code where it has one."""
    from cloudtrain.console import print_kv, summary_rows
    from cloudtrain.errors import JobFailed

    print_kv(console, f"Job {status.job_id}: {status.state.value}", summary_rows(status.details))
    if status.state.exit_code:
        error = JobFailed(f"job {status.job_id} ended {status.state.value}" + (f": {status.message}" if status.message else ""))
        error.exit_code = status.details.get("exit_code") or status.state.exit_code
        raise error


