"""Ctrl-C on a local run promises a checkpoint only from a package that saves one (issue 40): a user's
package that saved nothing was told "saving a checkpoint…" and then "no checkpoint saved"."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from cloudtrain.backends.base import LogLine
from cloudtrain.backends.local.job import LocalJob

from .conftest import make_spec

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize(
    "lines, saves",
    [
        ([], False),  # a user's package that printed nothing of the kind
        ([json.dumps({"event": "epoch", "epoch": 1})], False),
        ([json.dumps({"event": "plan", "epochs": 3})], True),  # the bundled trainer: saves on SIGTERM
    ],
)
def test_a_stop_promises_a_checkpoint_only_from_a_package_that_saves(no_tf, fake_package, tmp_path, lines, saves):
    backend = no_tf()
    spec = make_spec(tmp_path)
    job_args, _ = backend._prepare_run(spec, fake_package)
    job = LocalJob(**job_args)
    for text in lines:
        job._watch(LogLine(T0, "chief", text))
    assert job.saves_on_stop is saves
    if not saves:  # a checkpoint written since: then a stop leaves one to resume from
        (tmp_path / "out" / "checkpoints" / "ckpt-3").mkdir(parents=True)
        assert job.saves_on_stop


class _Stopping:
    """A local run's handle as the CLI's Ctrl-C sees it: it stops, its lines end, it is cancelled."""

    stops_gracefully = True

    def __init__(self, saves: bool):
        self.saves_on_stop = saves

    def cancel(self):
        return None

    def logs(self, follow=False):
        return iter(())

    def wait(self):
        return "cancelled"


@pytest.mark.parametrize(
    "saves, said",
    [
        (True, "stopping: saving a checkpoint… (Ctrl-C again to kill now)"),
        (False, "stopping every replica (SIGTERM; Ctrl-C again to kill now)"),
    ],
)
def test_ctrl_c_says_saving_only_for_a_package_that_saves(saves, said):
    import io

    from rich.console import Console

    from cloudtrain.cli._follow import _cancel

    out = io.StringIO()
    handle: Any = _Stopping(saves)  # the members _cancel uses
    assert _cancel(Console(file=out, width=200), handle, show=lambda line: None, shown=0) == "cancelled"
    assert out.getvalue().strip() == said
