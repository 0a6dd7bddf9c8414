"""Local sweeps: Optuna chooses the trials, each trial is a normal local run.

Everything a sweep knows lives in its folder (``cloudtrain-runs/<sweep>/``): ``sweep.json``
(how to rebuild the job: config file, ``--set`` overrides, job name) and Optuna's journal
(``optuna.journal``, a file Optuna appends to and replays, so a sweep killed at any moment
resumes from it). Each trial runs in ``trial-NNN/`` with its own history record, reads its
metric from the trainer's event lines while it runs (``metric`` events, else the field of
``epoch`` events), reports each one to Optuna's pruner when early stopping is on, and is
cancelled when the pruner says so.

Resuming (:func:`resume_sweep`): trials that finished (complete, pruned or failed) are kept;
a trial that was running when the sweep died is marked failed-interrupted and its
parameters are queued again, so it reruns; then the sweep continues to ``max_trials``.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable

from cloudtrain.backends.base import JobState, LogLine
from cloudtrain.errors import UsageError
from cloudtrain.events import parse as parse_event
from cloudtrain.spec import JobSpec
from cloudtrain.sweeps import trial_base
from cloudtrain.sweeps.params import Param, resolve
from cloudtrain.words import counted

STATE_FILE = "sweep.json"
JOURNAL = "optuna.journal"
INTERRUPTED = "interrupted"  # user attribute of a trial that was running when the sweep died


class TrialFailed(Exception):
    """A trial's run failed or reported no metric; Optuna records it as FAIL and goes on."""


@dataclass
class TrialEvent:
    number: int
    job_id: str
    params: dict[str, Any]
    state: str  # started | COMPLETE | PRUNED | FAIL
    value: float | None = None
    message: str | None = None


def sweep_dir_of(spec: JobSpec) -> Path:
    from cloudtrain.backends.local.backend import output_dir_for

    return output_dir_for(spec)[0]


def write_state(folder: Path, *, config: str, overrides: tuple[str, ...], job_name: str, created: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps({"config": config, "overrides": list(overrides), "job_name": job_name,
                               "created": created}, indent=2))  # fmt: skip
    tmp.replace(folder / STATE_FILE)


def read_state(folder: Path) -> dict[str, Any]:
    try:
        state = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{folder} is not a local sweep (no {STATE_FILE})", hint="pass the sweep's job id") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{folder / STATE_FILE}: cannot read it ({exc.__class__.__name__})",
                         hint="the sweep cannot be resumed; start a new one") from None  # fmt: skip
    if not isinstance(state, dict) or not {"config", "overrides", "job_name"} <= set(state):
        raise UsageError(f"{folder / STATE_FILE}: damaged", hint="the sweep cannot be resumed; start a new one")
    return state


def open_study(folder: Path, spec: JobSpec, *, create: bool) -> Any:
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sweep = spec.sweep
    params = resolve(sweep.params, sweep.algorithm)
    if create:
        folder.mkdir(parents=True, exist_ok=True)
    storage = JournalStorage(JournalFileBackend(str(folder / JOURNAL)))
    if not create:
        return optuna.load_study(study_name=spec.job_name, storage=storage, sampler=_sampler(sweep, params))
    return optuna.create_study(
        study_name=spec.job_name, storage=storage, direction=sweep.goal, load_if_exists=True,
        sampler=_sampler(sweep, params),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=1) if sweep.early_stopping
        else optuna.pruners.NopPruner(),
    )  # fmt: skip


def _sampler(sweep: Any, params: list[Param]) -> Any:
    import optuna

    if sweep.algorithm == "grid":
        return optuna.samplers.GridSampler({p.name: list(p.grid_values()) for p in params}, seed=sweep.seed)
    if sweep.algorithm == "random":
        return optuna.samplers.RandomSampler(seed=sweep.seed)
    return optuna.samplers.TPESampler(seed=sweep.seed)


def suggest(trial: Any, param: Param) -> Any:
    if param.kind == "double":
        return trial.suggest_float(param.name, param.min, param.max, log=param.scale == "log")
    if param.kind == "integer":
        return trial.suggest_int(param.name, int(param.min), int(param.max), log=param.scale == "log")
    return trial.suggest_categorical(param.name, list(param.values))


def counted_trials(study: Any) -> int:
    """Trials that count towards max_trials: every finished one except those a dead sweep interrupted."""
    from optuna.trial import TrialState

    done = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
    return sum(1 for t in study.trials if t.state in done and not t.user_attrs.get(INTERRUPTED))


def requeue_interrupted(study: Any) -> int:
    """Trials left RUNNING by a sweep that died: mark them failed-interrupted and queue their params again."""
    from optuna.trial import TrialState

    count = 0
    for t in study.trials:
        if t.state in (TrialState.RUNNING, TrialState.WAITING) and t.params:
            study._storage.set_trial_user_attr(t._trial_id, INTERRUPTED, True)
            study._storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
            study.enqueue_trial(dict(t.params), skip_if_exists=False)
            count += 1
    return count


def run_trials(spec: JobSpec, package: Any, *, backend: Any, on_event: Callable[[TrialEvent], None],
               remember: Callable[[Any, JobSpec], None], create: bool = True) -> Any:  # fmt: skip
    """Run the sweep in ``spec`` until max_trials count; returns the Optuna study."""
    import optuna

    sweep = spec.sweep
    folder = sweep_dir_of(spec)
    study = open_study(folder, spec, create=create)
    requeued = requeue_interrupted(study)
    if requeued:
        on_event(TrialEvent(-1, "", {}, "requeued", message=f"{counted(requeued, 'interrupted trial')} queued again"))
    params = resolve(sweep.params, sweep.algorithm)
    base = trial_base(spec)
    lock = threading.Lock()

    def objective(trial: Any) -> float:
        values = {p.name: suggest(trial, p) for p in params}
        trial_spec = dataclasses.replace(
            base,
            job_name=f"{spec.job_name}-t{trial.number:03d}",
            output_dir=str(folder / f"trial-{trial.number:03d}"),
            hyperparameters=MappingProxyType({**base.hyperparameters, **values}),
        )
        trial.set_user_attr("job_id", trial_spec.job_name)
        trial.set_user_attr("output_dir", trial_spec.output_dir)
        with lock:  # one submit at a time: the first one builds the package's environment for all
            handle = backend.submit(trial_spec, package)
            remember(handle, trial_spec)
        on_event(TrialEvent(trial.number, trial_spec.job_name, values, "started"))
        last = _follow_metric(handle, trial, sweep.metric, sweep.early_stopping)
        status = handle.wait()
        if status.state is JobState.CANCELLED and trial.user_attrs.get("pruned"):
            on_event(TrialEvent(trial.number, trial_spec.job_name, values, "PRUNED", last))
            raise optuna.TrialPruned()
        if status.state is not JobState.SUCCEEDED:
            message = status.message or status.state.value
            on_event(TrialEvent(trial.number, trial_spec.job_name, values, "FAIL", last, message))
            trial.set_user_attr("message", message)
            _stop_after_failures(study, sweep.max_failed_trials)
            raise TrialFailed(message)
        if last is None:
            message = f"the trial reported no {sweep.metric!r}"
            on_event(TrialEvent(trial.number, trial_spec.job_name, values, "FAIL", None, message))
            trial.set_user_attr("message", message)
            raise TrialFailed(message)
        on_event(TrialEvent(trial.number, trial_spec.job_name, values, "COMPLETE", last))
        return last

    remaining = sweep.max_trials - counted_trials(study)
    if remaining > 0:
        study.optimize(objective, n_trials=remaining, n_jobs=sweep.parallel_trials, catch=(TrialFailed,),
                       gc_after_trial=False)  # fmt: skip
    return study


def _stop_after_failures(study: Any, limit: int | None) -> None:
    """``max_failed_trials``: once that many trials failed (this one included), start no more."""
    from optuna.trial import TrialState

    failed = sum(1 for t in study.trials if t.state is TrialState.FAIL and not t.user_attrs.get(INTERRUPTED))
    if limit is not None and failed + 1 >= limit:
        study.stop()


def _follow_metric(handle: Any, trial: Any, metric: str, prune: bool) -> float | None:
    """Read the trial's lines as they come; the last value of ``metric`` wins (as on both clouds)."""
    last: float | None = None
    saw_metric_events = False
    for line in handle.logs(follow=True):
        value, step, source = metric_of(line, metric)
        if value is None or (source == "epoch" and saw_metric_events):
            continue  # the trainer writes both; its metric events are the ones to follow
        saw_metric_events |= source == "metric"
        last = value
        if prune:
            trial.report(value, step)
            if trial.should_prune():
                trial.set_user_attr("pruned", True)
                handle.cancel()
                break
    return last


def metric_of(line: LogLine, metric: str) -> tuple[float | None, int, str]:
    """``(value, step, source)`` from a ``metric`` event of that name, or an ``epoch`` event's field."""
    none = (None, 0, "")
    event = parse_event(line.message)
    if event is None:
        return none
    if event.get("event") == "metric" and event.get("name") == metric:
        value, step, source = event.get("value"), event.get("step", 0), "metric"
    elif event.get("event") == "epoch" and metric in event:
        value, step, source = event.get(metric), event.get("epoch", 0), "epoch"
    else:
        return none
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value), int(step or 0), source
    return none
