"""A local sweep process to kill: ``python -m tests.sweeps.killable_sweep FOLDER ALGORITHM STOP_AT``.

It drives :func:`cloudtrain.app.sweeps.local.run_trials` with the scripted backend of
``test_sweep_driver`` (no TensorFlow); trial ``STOP_AT`` prints ``trial N started`` and then
hangs, so a test can SIGKILL the process mid-trial, as a crash or ``kill -9`` would, or stop it
with SIGINT as Ctrl-C would (exit 130, as the CLI)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

from cloudtrain.app.sweeps import local
from tests.sweeps.test_sweep_driver import ScriptedBackend, ScriptedRun, curve, killable_spec


class HangingRun(ScriptedRun):
    def logs(self, follow=False):
        threading.Event().wait()  # until the process is killed
        yield from ()


class HangsAt(ScriptedBackend):
    """Trial ``stop_at`` hangs; the others run as scripted."""

    def __init__(self, stop_at: int):
        super().__init__(curve)
        self.stop_at = stop_at

    def submit(self, spec, package):
        if spec.job_name.endswith(f"-t{self.stop_at:03d}"):
            return HangingRun(spec, curve, None)
        return super().submit(spec, package)


def main() -> None:
    folder, algorithm, stop_at = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    spec = killable_spec(folder, algorithm)
    backend: Any = HangsAt(stop_at)  # a scripted stand-in: only submit, what run_trials calls

    def on_event(event) -> None:
        print(f"trial {event.number} {event.state} {event.params}", flush=True)

    try:
        local.run_trials(spec, None, backend=backend, on_event=on_event, remember=lambda h, s: None)
    except local.SweepStopped:  # SIGINT: Ctrl-C, or cancel of a detached sweep
        sys.exit(130)


if __name__ == "__main__":
    main()
