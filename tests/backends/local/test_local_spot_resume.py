"""The whole spot loop with the real trainer, on each cloud's contract, locally: the platform's SIGTERM
(from outside cloudtrain) mid-epoch saves a checkpoint, the run ends PREEMPTED with the step it saved,
``submit --resume`` continues that checkpoint in a new run to the end, and the interruption and the work
redone (none: the checkpoint is saved on the notice) read back from the runs as ``status`` shows them."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from cloudtrain.app.prepare import resumed
from cloudtrain.backends.base import JobState
from cloudtrain.backends.local.backend import LocalBackend
from cloudtrain.cli import main
from cloudtrain.following.events import parse as parse_event
from cloudtrain.following.interruptions import of_status
from cloudtrain.history import RUNS_DIR as LOCAL_RUNS_DIR

from .conftest import JOB_NAME, make_spec

REPO = Path(__file__).resolve().parents[3]
pytestmark = [pytest.mark.slow, pytest.mark.tf]
EPOCHS, STEPS = 12, 40  # digits (one pass is 45 steps of 32): one-step calls, so a notice lands mid-epoch
# The SIGTERM is sent once the epoch-1 line has come through the run's log, which can trail the
# trainer by a good part of a second on a loaded machine: with 3 epochs the two left (~0.3 s quiet)
# could end before the signal landed (exit 0, no save). Eleven epochs left outlast that trail by
# seconds; the resumed run pays for them (a few seconds), the preempted one does not.
ARGS = ("--data=digits", f"--epochs={EPOCHS}", f"--steps-per-epoch={STEPS}", "--steps-per-execution=1")


def _events(job, kind: str) -> list[dict]:
    return [e for line in job.logs() if (e := parse_event(line.message)) and e.get("event") == kind]


@pytest.mark.parametrize("cloud", ["vertex", "sagemaker"])
def test_a_preempted_run_resumes_from_its_checkpoint_on_the_contract(
    cloud, tf_cache, tf_image, tmp_path, monkeypatch, capsys
):
    from cloudtrain.packaging import build_sdist

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    package = build_sdist(REPO / "trainer", tmp_path / "dist")
    backend = LocalBackend(cache_root=tf_cache, gpu_count=lambda: 0, image_for=lambda spec: tf_image)
    spec = make_spec(
        tmp_path, cloud=cloud, module="trainer.task", args=ARGS, output_dir=str(tmp_path / LOCAL_RUNS_DIR / JOB_NAME)
    )
    first = backend.submit(spec, package)
    signalled = False
    for line in first.logs(follow=True):
        if line.message.startswith(
            '{"event": "epoch", "epoch": 1,'
        ):  # training runs: the platform reclaims the machine
            os.killpg(first.status().details["pids"]["chief" if cloud == "vertex" else "algo-1"], signal.SIGTERM)
            signalled = True
            break
    assert signalled, "the run ended before its first epoch line came through"
    stopped = first.wait()
    assert stopped.state is JobState.PREEMPTED, [line.message for line in first.logs()][-30:]
    saved = stopped.details["saved"]
    assert saved["source"] == "saved on SIGTERM" and STEPS <= saved["step"] < EPOCHS * STEPS
    interrupted = of_status(stopped, first.logs())
    assert interrupted is not None and interrupted["count"] == 1 and interrupted["steps_redone"] == 0
    assert main(["status", spec.output_dir, "-o", "json"]) == 0  # what `cloudtrain status RUN_DIR` shows
    assert json.loads(capsys.readouterr().out)["interruptions"] == interrupted
    assert interrupted["items"][0]["step"] == interrupted["items"][0]["checkpoint_step"] == saved["step"]

    again = backend.submit(
        resumed(
            make_spec(tmp_path, cloud=cloud, module="trainer.task", args=ARGS, output_dir=str(tmp_path / "second")),
            backend,
            JOB_NAME,
        ),
        package,
    )
    done = again.wait()
    assert done.state is JobState.SUCCEEDED, [line.message for line in again.logs()][-30:]
    assert _events(again, "plan")[0]["resume_step"] == saved["step"]
    assert _events(again, "done")[0]["steps"] == EPOCHS * STEPS
    assert [e["epoch"] for e in _events(again, "epoch")] == list(range(saved["step"] // STEPS + 1, EPOCHS + 1))
    resumed_from = of_status(done, again.logs())
    assert resumed_from is not None and resumed_from["resumed_from_step"] == saved["step"]
