"""Which process runs a local sweep's trials, so later commands can tell it runs and stop it: the submitting one, or a
detached ``sweep resume`` (:func:`hand_over`). ``owner.json`` holds its pid and that pid's start time (a reused pid is
never taken for it); ``cancel`` sends SIGINT, then SIGTERM after :data:`GRACE_S`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cloudtrain.leftovers import process_runs, process_start
from cloudtrain.statefiles import Damage, load_json_object, write_atomic

OWNER = "owner.json"
LOG = "sweep.log"  # a detached sweep's output
GRACE_S = 30.0  # after SIGINT, before SIGTERM: the running trials' replicas get theirs and may checkpoint
_POLL_S = 0.2


def claim(folder: Path, pid: int | None = None) -> None:
    """Record ``pid`` (default: this process) as the one running the sweep in ``folder``."""
    pid = os.getpid() if pid is None else pid
    write_atomic(folder / OWNER, json.dumps({"pid": pid, "start": process_start(pid)}))


def release(folder: Path) -> None:
    """This process no longer runs the sweep's trials (it finished or was stopped)."""
    if running_owner(folder) == os.getpid():
        (folder / OWNER).unlink(missing_ok=True)


def running_owner(folder: Path) -> int | None:
    """The pid of the process running the sweep in ``folder``; None when none runs it (or the owner file is damaged)."""
    found = _recorded(folder)
    return found[0] if found is not None and process_runs(*found) else None


def _recorded(folder: Path) -> tuple[int, object] | None:
    """``(pid, start time)`` of the owner file; None when there is none or it is damaged."""
    state = load_json_object(folder / OWNER, required=("pid",), recover="the sweep is not running")
    if isinstance(state, Damage):
        return None
    pid = state["pid"]
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1:
        return None  # a damaged file never gets init or a process group signalled
    return pid, state.get("start")


def stop(folder: Path, *, wait: bool) -> bool:
    """Stop the process running the sweep in ``folder`` as Ctrl-C would; False when none does. With ``wait``, return
    once it has ended (SIGTERM after :data:`GRACE_S`, SIGKILL after as long again)."""
    found = _recorded(folder)
    if found is None or not process_runs(*found):
        return False
    pid, start = found
    _signal(pid, signal.SIGINT)
    if not wait:
        return True
    for then in (signal.SIGTERM, signal.SIGKILL, None):
        deadline = time.monotonic() + GRACE_S
        while process_runs(pid, start) and time.monotonic() < deadline:
            time.sleep(_POLL_S)
        if not process_runs(pid, start) or then is None:
            return True
        _signal(pid, then)
    return True


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # it has just ended


def hand_over(folder: Path, sweep_id: str) -> int:
    """Start the owner of the sweep in ``folder`` with this environment and working directory; its pid."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOG, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cloudtrain", "sweep", "resume", sweep_id, "--detached"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    claim(folder, proc.pid)  # before returning: a status right after reads the sweep as running
    return proc.pid
