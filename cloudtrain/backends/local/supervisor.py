"""The owner of a detached local run: ``python -m cloudtrain.backends.local.supervisor RUN_DIR``.

Replicas die with the process that starts them, and only it sees how they end, so ``submit --detach`` hands the run
to this process in a session of its own. It gets the run on stdin (pickled, so secret values never touch the
disk), runs it as an attached submit does (:class:`LocalJob`: the same line files and ``status.json``, which
:class:`~cloudtrain.backends.local.job.RecordedJob` reads), and exits when it ends; SIGTERM (``cancel``) stops the
replicas as Ctrl-C does."""

from __future__ import annotations

import copyreg
import io
import os
import pickle
import signal
import subprocess
import sys
import threading
from pathlib import Path
from types import MappingProxyType
from typing import Any

from cloudtrain.backends.local.job import LocalJob, RecordedJob
from cloudtrain.backends.local.processes import Launch
from cloudtrain.backends.local.record import RUN_DIR
from cloudtrain.errors import BackendError, CloudtrainError

READY = "started"  # the supervisor's one line to the submitter once the replicas run
ERRORS = "supervisor.log"  # in RUN_DIR: what the supervisor itself printed (a crash's traceback)


def hand_over(job: dict[str, Any], launches: list[Launch], out: Path) -> RecordedJob:
    """Start the supervisor for the run in ``out`` (``job``: :class:`LocalJob`'s arguments) and return once its
    replicas run; :class:`BackendError` with the supervisor's own words when it could not."""
    run_dir = out / RUN_DIR
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / ERRORS, "ab") as errors:
        proc = subprocess.Popen(
            [sys.executable, "-m", __name__, str(out)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            start_new_session=True,  # no Ctrl-C, no hang-up of this terminal reaches the run
        )
    answer, _ = proc.communicate(_pickled((job, launches)))  # ends when the supervisor closes stdout
    said = answer.decode("utf-8", errors="replace").strip()
    if said != READY:
        raise BackendError(
            f"the detached run in {out} did not start: {said or f'see {run_dir / ERRORS}'}",
            hint="submit again without --detach to see the run start",
        )
    return RecordedJob(run_dir / "status.json")


def _pickled(run: object) -> bytes:
    """``run`` pickled; a spec's read-only mappings (which pickle refuses) travel as plain dicts."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer)
    pickler.dispatch_table = {**copyreg.dispatch_table, MappingProxyType: lambda m: (_read_only, (dict(m),))}
    pickler.dump(run)
    return buffer.getvalue()


def _read_only(mapping: dict[str, Any]) -> MappingProxyType[str, Any]:
    return MappingProxyType(mapping)


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    job_args, launches = pickle.loads(sys.stdin.buffer.read())
    if os.fork() > 0:
        os._exit(0)  # the submitter reaps this one; the run's owner is nobody's child and never a zombie
    job = LocalJob(**job_args, owner_pid=os.getpid())
    try:
        job._start(launches)
    except CloudtrainError as exc:  # a replica that cannot start, a log file that is a link
        print(exc.message, flush=True)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=job.cancel, daemon=True).start())
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    print(READY, flush=True)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # the submitter's read ends here
    os.close(devnull)
    job.wait()
    print(f"{out}: {job.status().native_state}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
