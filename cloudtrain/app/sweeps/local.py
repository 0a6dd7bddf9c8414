"""Local sweeps: Optuna chooses the trials, each a normal local run in ``trial-NNN/``. ``sweep.json`` and Optuna's
journal make a sweep killed at any moment resumable: finished trials are kept and an interrupted one reruns under its
own number and parameters (:func:`rerun_interrupted`); a damaged journal is refused (:mod:`.journal`)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from cloudtrain import history
from cloudtrain.backend_rules import Capability
from cloudtrain.backends.base import Backend, JobHandle, JobState, LogLine
from cloudtrain.errors import CloudtrainError, UsageError
from cloudtrain.following.events import parse as parse_event
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec
from cloudtrain.statefiles import Damage, load_json_object, write_atomic
from cloudtrain.sweeps import journal, sweep_of, trial_base
from cloudtrain.sweeps.params import Param, resolve

STATE_FILE = "sweep.json"
JOURNAL = journal.NAME
INTERRUPTED = "interrupted"  # user attribute of trials an older cloudtrain requeued as new ones after a kill


class SweepStopped(BaseException):
    """The user stopped the sweep (Ctrl-C, ``cancel``'s SIGINT). Not a KeyboardInterrupt, which Optuna records as a FAIL
    never rerun: running trials stay RUNNING for ``sweep resume``."""


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
    """The sweep's folder: where a run here of ``spec`` goes (:func:`cloudtrain.history.run_folder`)."""
    return history.run_folder(spec.output_dir, spec.job_name)[0]


def write_state(folder: Path, *, config: str, overrides: tuple[str, ...], job_name: str, created: str) -> None:
    write_atomic(
        folder / STATE_FILE,
        json.dumps(
            {"config": config, "overrides": list(overrides), "job_name": job_name, "created": created}, indent=2
        ),
    )


def read_state(folder: Path) -> dict[str, Any]:
    """The sweep's ``sweep.json``; one StateError line (file, problem, recovery) when it is damaged."""
    if not (folder / STATE_FILE).exists():
        raise UsageError(f"{folder} is not a local sweep (no {STATE_FILE})", hint="pass the sweep's job id")
    state = load_json_object(
        folder / STATE_FILE,
        required=("config", "overrides", "job_name"),
        recover="the sweep cannot be resumed; start a new one",
        inside=folder,
    )
    if isinstance(state, Damage):
        raise state.error()
    return state


def open_study(folder: Path, spec: JobSpec, *, create: bool) -> Any:
    """The sweep's study (None: none, not ``create``), its journal checked and replayed read-only first."""
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    # ERROR: a failed trial is one line of ours; Optuna's warning would print the objective's traceback
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    sweep = sweep_of(spec)
    params = resolve(sweep.params, sweep.algorithm)
    path = folder / JOURNAL
    damage = journal.damage(path)  # also removes a 0-byte journal a kill left
    if damage is not None:
        raise damage.error()
    recorded = path.exists()
    if not recorded and not create:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    try:
        storage = JournalStorage(JournalFileBackend(str(path)))  # replays the journal; writes nothing
        names = {s.study_name for s in storage.get_all_studies()}
    except Exception as exc:
        raise journal.replay_failed(path, exc).error() from None
    if spec.job_name in names:
        return optuna.load_study(study_name=spec.job_name, storage=storage, sampler=_sampler(sweep, params))
    if recorded:  # records, but not this sweep's study: its first lines are gone, or it is another sweep's
        raise journal.missing_study(path, spec.job_name).error()
    if not create:
        return None
    return optuna.create_study(
        study_name=spec.job_name,
        storage=storage,
        direction=sweep.goal,
        sampler=_sampler(sweep, params),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=1)
        if sweep.early_stopping
        else optuna.pruners.NopPruner(),
    )


def _sampler(sweep: Any, params: list[Param]) -> Any:
    import optuna

    from cloudtrain.sweeps.seeding import PerTrialSeedSampler  # imports Optuna at its top: only a sweep pays

    def make(seed: int | None) -> Any:
        if sweep.algorithm == "grid":
            return optuna.samplers.GridSampler({p.name: list(p.grid_values()) for p in params}, seed=seed)
        if sweep.algorithm == "random":
            return optuna.samplers.RandomSampler(seed=seed)
        return optuna.samplers.TPESampler(seed=seed)

    if sweep.seed is None or sweep.algorithm == "grid":  # the grid's seed orders its points: it must stay one
        return make(sweep.seed)  # (a grid never revisits a point: it reads the visited ones from the study)
    return PerTrialSeedSampler(make, sweep.seed)


def suggest(trial: Any, param: Param) -> Any:
    if param.kind == "double":
        low, high = param.bounds()
        return trial.suggest_float(param.name, low, high, log=param.scale == "log")
    if param.kind == "integer":
        low, high = param.bounds()
        return trial.suggest_int(param.name, int(low), int(high), log=param.scale == "log")
    return trial.suggest_categorical(param.name, list(param.values))


def counted_trials(study: Any) -> int:
    """Trials that count towards max_trials: every finished one except those a dead sweep interrupted."""
    from optuna.trial import TrialState

    done = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
    return sum(1 for t in study.trials if t.state in done and not t.user_attrs.get(INTERRUPTED))


def ended_state(study: Any) -> str:
    """How a finished sweep ended: SUCCEEDED when a trial completed (it has a best), else FAILED."""
    from optuna.trial import TrialState

    return "SUCCEEDED" if any(t.state is TrialState.COMPLETE for t in study.trials) else "FAILED"


def failed_trials(study: Any) -> int:
    from optuna.trial import TrialState

    return sum(1 for t in study.trials if t.state is TrialState.FAIL and not t.user_attrs.get(INTERRUPTED))


def interrupted_trials(study: Any) -> list[Any]:
    """Trials a sweep that died left RUNNING (Optuna marks a trial FAIL on any exception it sees)."""
    from optuna.trial import TrialState

    return [t for t in study.trials if t.state is TrialState.RUNNING]


def rerun_interrupted(study: Any, objective: Callable[[Any], float]) -> None:
    """Run each interrupted trial again under its own number, with its recorded params; the rest are sampled."""
    import optuna
    from optuna.trial import TrialState

    for frozen in interrupted_trials(study):
        trial = optuna.trial.Trial(study, frozen._trial_id)
        try:
            value = objective(trial)
        except optuna.TrialPruned:
            study.tell(trial, state=TrialState.PRUNED)
        except TrialFailed:
            study.tell(trial, state=TrialState.FAIL)
        else:
            study.tell(trial, value)


def retire(backend: Backend, attrs: Mapping[str, Any]) -> Path | None:
    """Make way for an interrupted trial's rerun: stop its old run (a ``kill -9``'d sweep leaves replicas) and set its
    folder aside as ``trial-NNN.interrupted[-K]``; where it went."""
    job_id, out = attrs.get("job_id"), attrs.get("output_dir")
    if isinstance(job_id, str) and job_id:
        entry = history.find(job_id)  # the id its backend attaches by (a local run: its folder)
        with contextlib.suppress(CloudtrainError):  # a run that left no record has nothing to stop
            old = (
                backend.attach(entry.attach_id, region=entry.region, project=entry.project)
                if entry
                else backend.attach(job_id)
            )
            if not old.status().state.terminal:
                old.kill()
    if not isinstance(out, str) or not Path(out).exists():
        return None
    aside = Path(f"{out}.interrupted")
    tries = 1
    while aside.exists():
        tries += 1
        aside = Path(f"{out}.interrupted-{tries}")
    Path(out).rename(aside)
    return aside


def run_trials(
    spec: JobSpec,
    package: BuiltPackage | None,
    *,
    backend: Backend,
    on_event: Callable[[TrialEvent], None],
    remember: Callable[[JobHandle, JobSpec], None],
) -> Any:
    """Run the sweep in ``spec`` until max_trials count; returns the Optuna study."""
    import optuna

    sweep = sweep_of(spec)
    folder = sweep_dir_of(spec)
    study = open_study(folder, spec, create=True)
    rerun = [t.number for t in interrupted_trials(study)]
    if rerun:
        numbers = ", ".join(str(n) for n in rerun)
        many = len(rerun) > 1
        message = f"interrupted trial{'s' if many else ''} {numbers} run{'' if many else 's'} again"
        on_event(TrialEvent(-1, "", {}, "requeued", message=message))
    params = resolve(sweep.params, sweep.algorithm)
    base = trial_base(spec)
    # a trial that runs elsewhere (a pod) writes under output_dir, a bucket too; here, under the sweep's folder
    outputs = str(folder) if Capability.RUNS_HERE in backend.facts.capabilities else spec.output_dir.rstrip("/")
    lock = threading.Lock()

    def objective(trial: Any) -> float:
        values = {p.name: suggest(trial, p) for p in params}
        trial_spec = dataclasses.replace(
            base,
            job_name=f"{spec.job_name}-t{trial.number:03d}",
            output_dir=f"{outputs}/trial-{trial.number:03d}",
            hyperparameters=MappingProxyType({**base.hyperparameters, **values}),
        )
        with lock:  # one submit at a time: the first one builds the package's environment for all
            retire(backend, trial.user_attrs)  # an interrupted trial's old run, when this one reruns it
            trial.set_user_attr("job_id", trial_spec.job_name)
            trial.set_user_attr("output_dir", trial_spec.output_dir)
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

    with _sigint_stops_the_sweep():
        rerun_interrupted(study, objective)
        remaining = sweep.max_trials - counted_trials(study)
        if remaining > 0:
            study.optimize(
                objective, n_trials=remaining, n_jobs=sweep.parallel_trials, catch=(TrialFailed,), gc_after_trial=False
            )
    return study


@contextlib.contextmanager
def _sigint_stops_the_sweep() -> Iterator[None]:
    """SIGINT raises :class:`SweepStopped` while trials run (main thread only); the old handler restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise SweepStopped()

    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _stop_after_failures(study: Any, limit: int | None) -> None:
    """``max_failed_trials``: once that many trials failed (this one included), start no more."""
    if limit is not None and failed_trials(study) + 1 >= limit:
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
