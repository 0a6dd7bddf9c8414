"""Start the owner of a detached local sweep (see :mod:`.sweep_owner`).

Its own module because it starts a process: ``--help`` and ``--dry-run`` never import ``subprocess``
(tests/test_cli.py::test_fast_paths_import_no_cloud_sdk_nor_pydantic), and only ``submit --detach``
of a local sweep comes here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cloudtrain.app.sweeps.owner import LOG, claim


def hand_over(folder: Path, sweep_id: str) -> int:
    """Start the owner of the sweep in ``folder``; its pid.

    The owner inherits this process's environment (``shell:`` secrets are read from it again, never
    written to disk) and working directory (where a relative ``output_dir`` points)."""
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
