"""The ``cloudtrain`` command line: one error funnel (:class:`CloudtrainError`; ``--debug`` for tracebacks),
lazy backends."""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from types import FrameType
from typing import Any

import click

from cloudtrain.backend_rules import missing_extra
from cloudtrain.cli._group import cli, with_debug
from cloudtrain.errors import CloudtrainError, ExitCode
from cloudtrain.secrets.masking import mask_text
from cloudtrain.text import cut_long, first_line

__all__ = ["cli", "main"]


def _line_buffered() -> None:
    """Each line reaches a pipe as it is printed (``submit | tee run.log``, a CI log, a script reading the
    followed job's lines), not 8 KiB later: Python buffers a pipe by blocks unless PYTHONUNBUFFERED is set."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(line_buffering=True)
            except (OSError, ValueError):  # a stream that cannot change now (closed, or already written in a way)
                pass


#: What a Ctrl-C that ended a command leaves, in words: nothing half-done counts as done.
RESUME_HINT = (
    "Run the same command again to resume: a download goes on where it stopped, a built environment is reused."
)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; turn every error into one line and an exit code (the traceback only with --debug)."""
    args = sys.argv[1:] if argv is None else argv
    _line_buffered()
    debug = "--debug" in (args[: args.index("--")] if "--" in args else args)  # any command takes it
    previous = _terminate_as_interrupt()
    with_debug(cli)  # commands added to subgroups after those joined the group
    try:
        with cli.make_context("cloudtrain", list(args)) as ctx:  # not cli.main: it turns EPIPE into exit 1
            cli.invoke(ctx)
        return 0
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return ExitCode.INTERRUPTED
    except click.ClickException as exc:
        if exc.message != (masked := mask_text(exc.message)):  # a refused option value may be a credential
            click.echo(f"Error: {masked}", err=True)
            return exc.exit_code
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except SystemExit as exc:  # a command that chose its exit code (detaching on Ctrl-C: 130)
        return exc.code if isinstance(exc.code, int) else 1
    except CloudtrainError as exc:
        if debug:
            traceback.print_exc()  # --debug adds the traceback; the exit code stays the table's
        for each in getattr(exc, "errors", None) or (exc,):  # a config's every error, one line each
            click.echo(f"error: {cut_long(str(each))}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        if debug:
            traceback.print_exc()
        click.echo(f"Interrupted. {RESUME_HINT}", err=True)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # `cloudtrain machines | head -1`: the reader has what it wanted
        _discard_stdout()
        return ExitCode.OK
    except Exception as exc:  # a bug, or a case no error covers yet: still one line
        if debug:
            traceback.print_exc()
        if missing := missing_extra(exc):  # a cloud's SDK is not installed: name the extra
            click.echo(f"error: {missing}", err=True)
            return missing.exit_code
        first = cut_long(first_line(mask_text(str(exc))))
        click.echo(f"error: unexpected {type(exc).__name__}" + (f": {first}" if first else ""), err=True)
        if not debug:
            click.echo("  run the same command with --debug for the traceback, and please report it", err=True)
        return ExitCode.JOB_FAILED
    finally:
        for signum, handler in (previous or {}).items():
            if handler is not None:  # None: a handler not set from Python, which cannot be put back
                signal.signal(signum, handler)


_AS_CTRL_C = ("SIGTERM", "SIGHUP")  # kill or a CI timeout; the terminal closed (a hang-up)


def _terminate_as_interrupt() -> dict[int, Callable[[int, FrameType | None], Any] | int | None] | None:
    """SIGTERM and SIGHUP unwind like Ctrl-C, so temp folders, uploads and local replicas are cleaned up; a signal
    already ignored (``nohup``) stays so. The handlers to restore (None off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = {}
    for name in _AS_CTRL_C:
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, interrupt)
    return previous


def _discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (tests capture it)
        pass


if __name__ == "__main__":
    sys.exit(main())
