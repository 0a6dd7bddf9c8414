"""The local sweep driver with a scripted backend: pruning cancels a run, failures are recorded, parallel trials."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import threading
from pathlib import Path
from types import MappingProxyType

import pytest

from cloudtrain.app.sweeps import local
from cloudtrain.backend_rules import Capabilities, Capability
from cloudtrain.backend_rules.interface import Facts
from cloudtrain.backends.base import JobState, JobStatus, LogLine
from cloudtrain.config.load import load_config
from cloudtrain.errors import UsageError
from cloudtrain.spec import JobSpec, build_spec

ROOT = Path(__file__).resolve().parents[2]


class ScriptedRun:
    """A local run whose metric per epoch is ``curve(lr, epoch)``; ``fail_lr_above`` makes it exit 1."""

    def __init__(self, spec, curve, fail_above: float | None):
        self.job_id = spec.job_name
        self.output_dir = Path(spec.output_dir)
        self.lr = float(next(a.split("=")[1] for a in spec.module_args() if a.startswith("--lr=")))
        self.curve, self.fail = curve, fail_above is not None and self.lr > fail_above
        self.cancelled = False
        self.epochs_run = 0

    def logs(self, follow=False):
        now = dt.datetime.now(dt.timezone.utc)
        for epoch in range(1, 6):
            if self.cancelled:
                return
            self.epochs_run = epoch
            event = {"event": "epoch", "epoch": epoch, "val_accuracy": self.curve(self.lr, epoch)}
            yield LogLine(now, "chief", json.dumps(event))

    def _status(self, state):
        return JobStatus(
            self.job_id,
            str(self.output_dir),
            state,
            state.value,
            message="replica chief exited with code 1" if state is JobState.FAILED else None,
        )

    def wait(self):
        if self.cancelled:
            return self._status(JobState.CANCELLED)
        return self._status(JobState.FAILED if self.fail else JobState.SUCCEEDED)

    def cancel(self):
        self.cancelled = True
        return self._status(JobState.CANCELLED)


class ScriptedBackend:
    facts = Facts(capabilities=Capabilities.of({Capability.RUNS_HERE}))  # a stand-in for local runs: trials write
    # under the sweep's folder

    def __init__(self, curve, fail_above=None):
        self.curve, self.fail_above, self.runs = curve, fail_above, []
        self.lock = threading.Lock()

    def submit(self, spec, package):
        run = ScriptedRun(spec, self.curve, self.fail_above)
        with self.lock:
            self.runs.append(run)
        return run

    def attach(self, job_id, **_):
        """A run of another process (the killed sweep's) is not known to this one, as a gone run is not."""
        raise UsageError(f"no run {job_id!r}")


def _spec(tmp_path: Path, **sweep) -> JobSpec:
    spec = build_spec(load_config(ROOT / "job_configs" / "sweep.yaml", ["backend=local"]))
    assert spec.sweep is not None
    cfg = spec.sweep.model_copy(update={"params": {"lr": spec.sweep.params["lr"]}, "seed": 7, **sweep})
    return dataclasses.replace(
        spec, sweep=cfg, output_dir=str(tmp_path / "sweep"), job_name="lr-sweep", hyperparameters=MappingProxyType({})
    )


GRID = [0.001, 0.002, 0.003, 0.004, 0.005]


def killable_spec(folder: Path, algorithm: str) -> JobSpec:
    """Five trials, one at a time, seed 7; on a grid, five learning rates."""
    from cloudtrain.config.schema import SweepParam

    spec = _spec(folder, max_trials=5, parallel_trials=1, algorithm=algorithm)
    if algorithm != "grid":
        return spec
    assert spec.sweep is not None
    return dataclasses.replace(spec, sweep=spec.sweep.model_copy(update={"params": {"lr": SweepParam(values=GRID)}}))


def curve(lr: float, epoch: int) -> float:
    """A metric that rises with the epoch and is best at small learning rates."""
    return 1 - lr + 0.01 * epoch


def _run(spec, backend):
    events: list[local.TrialEvent] = []
    study = local.run_trials(spec, None, backend=backend, on_event=events.append, remember=lambda h, s: None)
    return study, events


def test_early_stopping_cancels_runs_below_the_median(tmp_path: Path) -> None:
    curve = lambda lr, epoch: (0.9 if lr < 0.005 else 0.2) + 0.01 * epoch  # noqa: E731
    backend = ScriptedBackend(curve)
    study, events = _run(
        _spec(tmp_path, max_trials=8, parallel_trials=1, early_stopping=True, algorithm="random"), backend
    )
    states = [t.state.name for t in study.trials]
    assert len(states) == 8 and "PRUNED" in states and "COMPLETE" in states
    for trial, run in zip(study.trials, backend.runs, strict=True):
        assert (trial.state.name == "PRUNED") == run.cancelled
        if run.cancelled:
            assert run.epochs_run < 5 and run.lr >= 0.005  # stopped early, and only a bad one
    assert {e.state for e in events} >= {"started", "COMPLETE", "PRUNED"}


def test_failed_trials_are_recorded_and_the_sweep_goes_on(tmp_path: Path) -> None:
    backend = ScriptedBackend(lambda lr, epoch: 1 - lr, fail_above=0.003)
    study, events = _run(_spec(tmp_path, max_trials=6, parallel_trials=3, algorithm="random"), backend)
    assert len(study.trials) == 6 and len(backend.runs) == 6
    failed = [t for t in study.trials if t.state.name == "FAIL"]
    assert failed and all(t.params["lr"] > 0.003 for t in failed)
    assert all(t.user_attrs["message"] == "replica chief exited with code 1" for t in failed)
    assert study.best_trial.params["lr"] == min(t.params["lr"] for t in study.trials)
    assert local.counted_trials(study) == 6


def test_grid_visits_every_point_once(tmp_path: Path) -> None:
    from cloudtrain.config.schema import SweepParam

    spec = _spec(tmp_path, algorithm="grid", max_trials=3, parallel_trials=1)
    assert spec.sweep is not None
    spec = dataclasses.replace(
        spec, sweep=spec.sweep.model_copy(update={"params": {"lr": SweepParam(values=[0.001, 0.01, 0.1])}})
    )
    backend = ScriptedBackend(lambda lr, epoch: lr)
    study, _ = _run(spec, backend)
    assert sorted(r.lr for r in backend.runs) == [0.001, 0.01, 0.1]
    assert study.best_trial.params == {"lr": 0.1}


@pytest.mark.parametrize(
    "line",
    [
        '{"event": "metric", "name": "val_accuracy", "value": true}',
        "not json",
        '{"event": "epoch", "epoch": 2}',
        '{"event"',
    ],
)
def test_lines_that_are_not_the_metric_are_ignored(line: str) -> None:
    assert local.metric_of(LogLine(dt.datetime.now(), "chief", line), "val_accuracy")[0] is None


def test_max_failed_trials_stops_the_sweep(tmp_path: Path) -> None:
    backend = ScriptedBackend(lambda lr, epoch: 1 - lr, fail_above=0.0)  # every trial fails
    study, _ = _run(_spec(tmp_path, max_trials=8, parallel_trials=1, algorithm="random", max_failed_trials=2), backend)
    assert [t.state.name for t in study.trials] == ["FAIL", "FAIL"]


def test_a_trial_that_ends_well_without_its_metric_fails_with_why_and_does_not_stop_the_sweep(tmp_path: Path) -> None:
    """Unlike a failed run, a run that reports no metric is the trainer's omission: it is no run failure, so
    ``max_failed_trials`` does not stop the sweep on it."""
    backend = ScriptedBackend(lambda lr, epoch: None)  # every epoch line without a value of the metric
    study, events = _run(
        _spec(tmp_path, max_trials=3, parallel_trials=1, algorithm="random", max_failed_trials=2), backend
    )
    assert [t.state.name for t in study.trials] == ["FAIL", "FAIL", "FAIL"]
    why = "the trial reported no 'val_accuracy'"
    assert [t.user_attrs["message"] for t in study.trials] == [why] * 3
    assert [(e.state, e.value, e.message) for e in events if e.state == "FAIL"] == [("FAIL", None, why)] * 3


@pytest.mark.parametrize(
    "algorithm, stop",
    [("random", "SIGKILL"), ("bayesian", "SIGKILL"), ("grid", "SIGKILL"), ("random", "SIGINT")],
)
def test_a_killed_seeded_sweep_resumes_as_if_it_had_never_stopped(tmp_path: Path, algorithm: str, stop: str) -> None:
    """SIGKILL (a crash) or SIGINT (Ctrl-C, ``cancel``) during trial 2; the resume re-runs trial 2
    (same number, same params: a stopped trial is not a failed one), runs none of trials 0-1 again,
    and (random, bayesian) every trial has the params an uninterrupted sweep with that seed gives;
    a grid visits each point once."""
    import ast
    import os
    import signal
    import subprocess
    import sys

    sig = getattr(signal, stop)

    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.sweeps.killable_sweep", str(killed), algorithm, "2"],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if line.startswith("trial 2 started"):
                started = ast.literal_eval(line.split(" ", 3)[3])
                break
    finally:
        proc.send_signal(sig)
        proc.wait(30)
    assert proc.returncode == (130 if sig == signal.SIGINT else -sig)  # killable_sweep exits 130 as the CLI does

    resumed = ScriptedBackend(curve)
    study, _ = _run(killable_spec(killed, algorithm), resumed)

    assert [(t.number, t.state.name) for t in study.trials] == [(n, "COMPLETE") for n in range(5)]
    assert study.trials[2].params == started  # the interrupted trial, again, with its own params
    lrs = [t.params["lr"] for t in study.trials]
    assert [r.lr for r in resumed.runs] == lrs[2:]  # trial 2 again, then 3 and 4; never 0 or 1
    assert [Path(r.output_dir).name for r in resumed.runs] == ["trial-002", "trial-003", "trial-004"]
    assert len(set(lrs)) == 5
    if algorithm == "grid":
        assert sorted(lrs) == GRID
    else:
        uninterrupted, _ = _run(killable_spec(tmp_path / "whole", algorithm), ScriptedBackend(curve))
        assert [t.params for t in study.trials] == [t.params for t in uninterrupted.trials]
