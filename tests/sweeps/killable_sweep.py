"""A local sweep process to kill: ``python -m tests.sweeps.killable_sweep FOLDER ALGORITHM STOP_AT``.

It drives :func:`cloudtrain.app.sweep_local.run_trials` with the scripted backend of
``test_sweep_driver`` (no TensorFlow); trial ``STOP_AT`` prints ``trial N started`` and then
hangs, so a test can SIGKILL the process mid-trial, as a crash or ``kill -9`` would."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from tests.sweeps.test_sweep_driver import ScriptedBackend, ScriptedRun, curve, killable_spec


class HangingRun(ScriptedRun):
    def logs(self, follow=False):
        threading.Event().wait()  # until the process is killed
        yield from ()


def main() -> None:
    folder, algorithm, stop_at = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    spec = killable_spec(folder, algorithm)
    backend = ScriptedBackend(curve)
    plain_submit = backend.submit

    def submit(trial_spec, package):
        if trial_spec.job_name.endswith(f"-t{stop_at:03d}"):
            return HangingRun(trial_spec, curve, None)
        return plain_submit(trial_spec, package)

    backend.submit = submit

    def on_event(event) -> None:
        print(f"trial {event.number} {event.state} {event.params}", flush=True)

    from cloudtrain.app import sweep_local as local

    local.run_trials(spec, None, backend=backend, on_event=on_event, remember=lambda h, s: None)


if __name__ == "__main__":
    main()
