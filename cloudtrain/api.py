"""The Python API: what ``cloudtrain submit`` does, for a notebook or a pipeline step.

    import cloudtrain
    cfg = cloudtrain.load_config("job_configs/gpu4.yaml", overrides={"machine.accelerator_count": 8})
    plan = cloudtrain.plan(cfg)                 # the exact request(s), cost, candidates: what --dry-run prints
    job = cloudtrain.submit(cfg, local=False)   # returns a handle at once; nothing is followed
    for line in job.logs(follow=True): ...      # the same lossless followers as the CLI
    job.status(); job.wait(); job.cancel()
    job = cloudtrain.attach("1234567890")       # any id the CLI accepts

A thin layer over :mod:`cloudtrain.app`, the same code the CLI runs. Nothing here prints or exits:
errors are the exceptions of :mod:`cloudtrain.errors` (the ones the CLI turns into one line and an
exit code), warnings are kept on the returned objects (``notices``) or handed to ``notify``."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import logging
import re
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from cloudtrain import history
from cloudtrain.app.experiments import experiment_jobs
from cloudtrain.app.follow import masked_lines, watch_progress
from cloudtrain.app.job_status import StatusReport, status_report
from cloudtrain.app.launch import create
from cloudtrain.app.listing import listed
from cloudtrain.app.locate import locate
from cloudtrain.app.notices import Notice, Notify, ignore
from cloudtrain.app.outcome import Outcome, summarise
from cloudtrain.app.outputs import Downloaded, Listing, Output, download, list_outputs
from cloudtrain.app.outputs import Progress as DownloadProgress
from cloudtrain.app.plan import Plan, make_plan
from cloudtrain.app.prepare import load_spec, prepare, with_include
from cloudtrain.app.reattach import drain_kwargs, reattach_command
from cloudtrain.app.report import write_report
from cloudtrain.app.submit import SubmitOptions, load_job, resume_of
from cloudtrain.app.sweeps import drive as app_sweep
from cloudtrain.app.sweeps.local import TrialEvent
from cloudtrain.app.sweeps.lookup import load_results
from cloudtrain.app.tensorboard import DEFAULT_PORT, Board, serve
from cloudtrain.backend_rules import Capability, required, requiring
from cloudtrain.backends import get_backend
from cloudtrain.backends.base import JobHandle, JobState, JobStatus, LogLine, SweepHandle
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.console import ShownLines
from cloudtrain.errors import ConfigError, UsageError
from cloudtrain.following.progress import Progress
from cloudtrain.history import JobRecord
from cloudtrain.packaging import BuiltPackage
from cloudtrain.secrets.masking import masked_repr, secret_values
from cloudtrain.spec import JobSpec
from cloudtrain.sweeps.results import SweepResults

# A library prints nothing: the backends' step notes go to the ``cloudtrain`` logger, shown as the caller configures.
logging.getLogger("cloudtrain").addHandler(logging.NullHandler())
_F = TypeVar("_F", bound=Callable[..., Any])


def _fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` is what the annotation ``hint`` says (a text is no sequence of ids, a bool no number)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or hint is None or hint is type(None):
        return hint is Any or value is None
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arg) for arg in args)
    if origin is typing.Literal:
        return value in args
    if origin is Callable:
        return callable(value)
    if origin in (Sequence, list, tuple):
        return isinstance(value, (list, tuple)) and all(_fits(v, args[0]) for v in value if args and args[0] != ...)
    if origin is Mapping:
        return isinstance(value, Mapping) and all(isinstance(k, str) for k in value)
    if hint in (int, float):
        return isinstance(value, (int, float) if hint is float else int) and not isinstance(value, bool)
    return not isinstance(hint, type) or isinstance(value, hint)


def checked(func: _F) -> _F:
    """Check each argument against its annotation: a wrong type is one :class:`UsageError` naming it."""
    signature = inspect.signature(func)
    hints: dict[str, Any] = {}

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        if not hints:
            hints.update(typing.get_type_hints(func, globals()), _=None)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise UsageError(f"{func.__qualname__}(): {exc}") from None
        for name, value in bound.arguments.items():
            if name in hints and name != "return" and not _fits(value, hints[name]):
                raise UsageError(
                    f"{func.__qualname__}(): {name} must be {_words(hints[name])}, "
                    f"not {type(value).__name__} {repr(value)[:60]}"
                )
        return func(*args, **kwargs)

    return cast(_F, call)


def _words(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else re.sub(r"\b[\w.]+\.(\w+)", r"\1", str(hint))


__all__ = [
    "Config",
    "Job",
    "Plan",
    "Sweep",
    "attach",
    "jobs",
    "load_config",
    "plan",
    "report",
    "submit",
    "submit_sweep",
    "sweep_results",
    "tensorboard",
    # the types the functions above return, each with its fields in the reference (tools/api_reference.py)
    "Board",
    "Downloaded",
    "JobRecord",
    "JobState",
    "JobStatus",
    "Listing",
    "LogLine",
    "Notice",
    "Outcome",
    "Output",
    "StatusReport",
    "SweepResults",
    "TrialEvent",
]


@dataclass(frozen=True)
class Config:
    """A loaded and validated config (``--set`` overrides applied); ``spec`` is the job it describes."""

    path: Path
    overrides: tuple[str, ...]
    strict: bool
    include: tuple[str, ...]
    loaded: LoadedConfig
    spec: JobSpec
    #: Why the cloud refuses what a ``--local`` run accepts (a ``shell:`` secret): raised by a cloud plan or submit.
    cloud_refusal: ConfigError | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:  # overrides may set env: values (env.DB_PASSWORD=…): masked with the spec's
        spec = self.spec
        return masked_repr(self, secret_values(spec.env, spec.args, spec.hyperparameters))

    def _resolved(self, local: bool) -> tuple[LoadedConfig, JobSpec]:
        """This config as the job it runs as: a ``local`` run of the same target is loaded anew (as ``--local``)."""
        if not local and self.cloud_refusal is not None:
            raise self.cloud_refusal
        if local:
            options = SubmitOptions(self.overrides, local=True, strict=self.strict, include=self.include)
            return load_job(self.path, options)
        return self.loaded, with_include(self.spec, self.include)


@requiring
@checked
def load_config(
    path: str | Path,
    overrides: Mapping[str, Any] | Sequence[str] = (),
    *,
    strict: bool = False,
    include: Sequence[str] = (),
) -> Config:
    """Read and validate ``path``. ``overrides``: ``{"machine.accelerator_count": 8}`` or
    ``["machine.accelerator_count=8"]`` (``--set``); ``strict``: ``--strict-legacy``; ``include``: ``--include``. Bad
    input raises :class:`cloudtrain.errors.ConfigError`. A config only a local run accepts (a ``shell:`` secret) loads;
    a cloud ``plan`` or ``submit`` of it raises the refusal."""
    given = tuple(overrides.items()) if isinstance(overrides, Mapping) else None
    sets = tuple(f"{key}={json.dumps(value)}" for key, value in given) if given is not None else tuple(overrides)
    try:
        loaded, spec = load_spec(path, sets, strict=strict)
    except ConfigError as refusal:
        try:
            loaded, spec = load_spec(path, sets, local=True, strict=strict)
        except ConfigError:
            raise refusal from None
        return Config(Path(path), sets, strict, tuple(include), loaded, spec, cloud_refusal=refusal)
    return Config(Path(path), sets, strict, tuple(include), loaded, spec)


@requiring
@checked
def plan(config: Config, *, local: bool = False, show_secrets: bool = False, notify: Notify = ignore) -> Plan:
    """What ``submit`` would send, uploading and creating nothing: ``--dry-run``. ``plan.to_dict()`` is
    ``--dry-run -o json``; ``plan.request``, ``plan.fallbacks``, ``plan.cost_per_hour`` are its parts."""
    loaded, spec = config._resolved(local)
    return make_plan(
        prepare(loaded, spec, overrides=config.overrides, show_secrets=show_secrets, notify=notify),
        show_secrets=show_secrets,
    )


class Job:
    """A job from :func:`submit` or :func:`attach`: its backend handle and what the CLI does with it, unprinted."""

    def __init__(
        self, handle: JobHandle, *, spec: JobSpec | None = None, landed_on: int = 0, notices: Sequence[Notice] = ()
    ) -> None:
        self.handle = handle
        self.spec = spec  # None for an attached job
        self.landed_on = landed_on  # 0: the main request; n: fallback entry n
        self.notices = list(notices)
        self.outcome: Outcome | None = None  # after wait()
        self._progress: Progress | None = None

    @property
    def job_id(self) -> str:
        return self.handle.job_id

    @property
    def reattach_command(self) -> str:
        """The CLI command that follows this job again, from any directory."""
        return reattach_command(self.handle)

    @requiring
    def status(self) -> JobStatus:
        return self.handle.status()

    @requiring
    def status_report(self) -> StatusReport:
        """:meth:`status` with what ``cloudtrain status`` adds: the billed cost and the interruptions."""
        return status_report(self.handle)

    @checked
    def logs(
        self, follow: bool = False, drain: float | None = None, *, debug: bool = False, events: bool = False
    ) -> Iterator[LogLine]:
        """The lines ``cloudtrain logs`` shows; with ``follow``, until the job ends (after a final read). ``drain``: the
        stop rule's quiet period (``--drain``; None: the backend's). Printed credentials are ``***``.

        As in the CLI, DEBUG start-up noise is held back unless ``debug``, and progress events are rendered as words
        (``epoch 3/12  loss 0.41``); with ``events`` every event line comes as it came, ``line.event`` its parsed dict,
        as ``logs -o json`` has it."""
        with required():
            progress = self._watch() if follow else None  # a plain read is not watched: no extra status call
            shown = ShownLines(show_debug=debug, epochs=progress.epochs if progress else None)
            for line in masked_lines(self.handle.logs(follow=follow, **drain_kwargs(drain))):
                if progress is not None:
                    progress(line)
                if events and line.event is not None:
                    yield line
                elif (text := shown(line)) is not None:
                    yield line if text == line.message else dataclasses.replace(line, message=text)

    @requiring
    def wait(self) -> JobStatus:
        """Block until the job ends; its summary is kept in history and on :attr:`outcome`. A failed job is returned,
        not raised: ``job.outcome.error()`` is the CLI's exception."""
        status = self.handle.wait()
        self.outcome = summarise(status, self._progress, self.handle)
        return status

    @requiring
    @checked
    def cancel(self, wait: bool = False) -> JobStatus:
        """Cancel; with ``wait``, until it took effect. Nothing is summarised: whoever follows the job keeps that."""
        status = self.handle.cancel()
        status = self.handle.wait() if wait else status
        if status.state.terminal:  # kept: a cluster that deletes a cancelled job's objects then still knows its end
            ended = status.ended.isoformat() if status.ended else None
            history.note_state(status.job_id, status.name, status.state.value, ended=ended)
        return status

    @requiring
    def outputs(self) -> Listing:
        """What the job produced, with sizes (``cloudtrain outputs``); a running job's files so far."""
        return list_outputs(self.handle)

    @requiring
    @checked
    def download(
        self, dest: str | Path, *, force: bool = False, progress: DownloadProgress | None = None
    ) -> Downloaded:
        """Fetch :meth:`outputs` into ``dest``: resumed, checksums verified, no different file overwritten unless
        ``force``."""
        return download(list_outputs(self.handle), Path(dest), force=force, progress=progress)

    def _watch(self) -> Progress:
        """The phases of the lines read, for the summary's timeline, as the CLI's submit watches them."""
        if self._progress is None:
            spec = self.spec
            billed = spec is not None and Capability.BILLED in get_backend(spec.backend).facts.capabilities
            self._progress = watch_progress(self.handle, spec, billed=billed)
        return self._progress

    def __repr__(self) -> str:
        return f"<cloudtrain.Job {self.job_id}>"


@requiring
@checked
def submit(
    config: Config,
    *,
    local: bool = False,
    detach: bool = False,
    resume: str | None = None,
    show_secrets: bool = False,
    notify: Notify = ignore,
) -> Job:
    """Build, upload and create the job (trying ``fallback:`` entries when one gets no capacity), record it, and return
    at once. ``local``: run it here under the cloud's contract (``--local``); ``resume``: continue that job's
    checkpoints.

    A local run is this process's child unless ``detach``: the script's exit then stops it as ``cancel`` does, recorded
    CANCELLED. A cloud job always runs on."""
    loaded, spec = config._resolved(local)
    if spec.sweep is not None:
        raise UsageError(f"{config.path} has a sweep: section", hint="use cloudtrain.submit_sweep(config)")
    spec = resume_of(spec, resume)
    prepared = prepare(loaded, spec, overrides=config.overrides, show_secrets=show_secrets, notify=notify)
    launched = create(prepared, notify=notify, detach=detach)
    return Job(launched.handle, spec=launched.spec, landed_on=launched.index, notices=prepared.notices)


@requiring
@checked
def attach(
    job_id: str,
    *,
    backend: str | None = None,
    region: str | None = None,
    project: str | None = None,
    config: str | Path | None = None,
) -> Job:
    """A job by any id the CLI accepts: an id in this machine's history, a Vertex AI resource name,
    a SageMaker ARN, a local run's folder; ``backend``/``region``/``project``/``config`` as the flags."""
    found = locate(job_id, backend, region, project, str(config) if config else None)
    return Job(found.backend.attach(found.job_id, region=found.region, project=found.project))


@dataclass
class Sweep:
    """A sweep from :func:`submit_sweep`: a local study (run in :meth:`wait`) or a cloud tuning job (:attr:`handle`)."""

    sweep_id: str
    spec: JobSpec
    package: BuiltPackage | None
    folder: Path | None = None
    handle: SweepHandle | None = None  # a cloud tuning job: the backend's sweep handle (attach_sweep)

    @requiring
    @checked
    def wait(self, on_trial: Callable[[TrialEvent], None] | None = None) -> SweepResults:
        """Run a local sweep's trials (``on_trial`` gets each :class:`TrialEvent`) or await a cloud one; its results."""
        if self.handle is None:
            return app_sweep.run_local(self.spec, self.package, on_event=on_trial or (lambda event: None))
        self.handle.wait()
        return self.handle.results()

    @requiring
    def results(self) -> SweepResults:
        return load_results(self.sweep_id)


@requiring
@checked
def submit_sweep(config: Config, *, local: bool = False, notify: Notify = ignore) -> Sweep:
    """Create a config's ``sweep:``; a local one's trials run in :meth:`Sweep.wait`."""
    loaded, spec = config._resolved(local)
    if spec.sweep is None:
        raise UsageError(f"{config.path} has no sweep: section", hint="use cloudtrain.submit(config)")
    prepared = prepare(loaded, spec, overrides=config.overrides, notify=notify)
    started = app_sweep.start(prepared)
    return Sweep(started.sweep_id, prepared.spec, prepared.package, started.folder, started.handle)


@requiring
@checked
def sweep_results(sweep_id: str) -> SweepResults:
    """A sweep's trials, local or in the cloud (``cloudtrain sweep results``)."""
    return load_results(sweep_id)


@requiring
@checked
def jobs(
    limit: int = 20, *, backend: str | None = None, region: str | None = None, experiment: str | None = None
) -> list[JobRecord]:
    """This machine's history, newest first, as ``cloudtrain list -o json`` shows it: a local run where its
    folder is now, with its state, end and metrics now; ``experiment``: ``list --experiment``."""
    if limit < 1:
        raise UsageError(f"jobs(): limit must be 1 or more, not {limit}")
    return [row.record for row in listed(limit, backend=backend, region=region, experiment=experiment)]


@requiring
@checked
def report(job_ids: Sequence[str] = (), out: str | Path | None = None, *, experiment: str | None = None) -> Path:
    """Write an HTML run report (matplotlib needed); its path. ``experiment``: all its jobs side by side."""
    ids = list(dict.fromkeys([*job_ids, *(experiment_jobs(experiment) if experiment else [])]))
    if not ids:
        raise UsageError("no jobs given", hint="name jobs, or experiment=NAME")
    return write_report(ids, Path(out) if out else None).page


@requiring
@checked
def tensorboard(
    job_ids: Sequence[str] = (),
    *,
    experiment: str | None = None,
    port: int = DEFAULT_PORT,
    bind: str = "127.0.0.1",
) -> Board:
    """Serve TensorBoard here over the jobs' event files (``cloudtrain tensorboard``); returns once it
    answers. ``board.url`` is its page, ``board.stop()`` ends it (or use it as a context manager)."""
    if not 1 <= port <= 65535:
        raise UsageError(f"tensorboard(): port must be 1 to 65535, not {port}")
    ids = list(job_ids) + (experiment_jobs(experiment) if experiment else [])
    return serve(list(dict.fromkeys(ids)), port=port, bind=bind)
