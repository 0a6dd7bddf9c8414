"""Submit a config: load it, prepare the job, then plan it (``--dry-run``), create and follow it, or start its sweep.
Shared by ``cloudtrain submit``, the gcloud forms and the Python API; nothing here prints (a :class:`SubmitView` is)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from cloudtrain.app.notices import Notice, Notify, ignore
from cloudtrain.app.plan import Plan, make_plan
from cloudtrain.app.prepare import Prepared, load_spec, prepare, resumed, with_include
from cloudtrain.backends import get_backend
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.yaml12 import LoadedYaml
from cloudtrain.spec import JobSpec

if TYPE_CHECKING:
    from cloudtrain.app.follow import FollowView
    from cloudtrain.app.launch import Launched
    from cloudtrain.following.progress import Progress

#: A config file, or the document a gcloud form wrote from its flags.
Source = str | Path | LoadedYaml | None


@dataclass(frozen=True)
class SubmitOptions:
    """How a config becomes a job: ``--set``, ``--local``, ``--strict-legacy``, ``--include``, ``--resume``,
    ``--show-secrets``, and the environment a backend's command reads the config with."""

    overrides: tuple[str, ...] = ()
    local: bool = False
    strict: bool = False
    include: tuple[str, ...] = ()
    resume: str | None = None
    show_secrets: bool = False
    environ: Mapping[str, str] | None = None


class SubmitView(Protocol):
    """Who is told what a submit does, in order (the CLI prints each; nothing here does). ``notice`` and
    the last three are :class:`cloudtrain.app.launch.LaunchView`'s, described there."""

    def notice(self, notice: Notice) -> None: ...

    def planned(self, prepared: Prepared, plan: Plan) -> None:
        """``--dry-run``: what would be sent; nothing was uploaded or created."""

    def prepared(self, prepared: Prepared) -> None:
        """The job is built and about to be created."""

    def sweep(self, prepared: Prepared, *, detach: bool, cancel: bool) -> None:
        """The config has ``sweep:``: drive it (:func:`cloudtrain.app.sweeps.drive.drive`)."""

    def created(self, launched: Launched, *, here: bool) -> None: ...

    def detached(self, launched: Launched, reattach: str) -> None: ...

    def follower(self, progress: Progress) -> FollowView: ...


def load_job(source: Source, options: SubmitOptions = SubmitOptions()) -> tuple[LoadedConfig, JobSpec]:
    """The config as the job it describes, with ``--include`` and ``--resume`` applied."""
    loaded, spec = load_spec(
        source,
        options.overrides,
        local=options.local,
        strict=options.strict,
        environ=options.environ,
    )
    return loaded, resume_of(with_include(spec, options.include), options.resume)


def resume_of(spec: JobSpec, resume: str | None) -> JobSpec:
    """``spec`` continuing the checkpoints of job ``resume`` (``--resume``); ``spec`` itself without one."""
    return resumed(spec, get_backend(spec.backend), resume) if resume else spec


def prepare_job(source: Source, options: SubmitOptions, *, notify: Notify = ignore) -> Prepared:
    """:func:`load_job`, then build the package and stage the data (:func:`cloudtrain.app.prepare.prepare`)."""
    loaded, spec = load_job(source, options)
    return prepare(loaded, spec, overrides=options.overrides, show_secrets=options.show_secrets, notify=notify)


def submit(
    source: Source,
    options: SubmitOptions,
    view: SubmitView,
    *,
    dry_run: bool = False,
    detach: bool = False,
    cancel_on_interrupt: bool = False,
    drain: float | None = None,
) -> None:
    """``cloudtrain submit``: load and prepare, then plan (``dry_run``) or create the job (or its sweep) and follow it
    unless ``detach``. A Ctrl-C while it is created raises :class:`~cloudtrain.app.notices.Detached` once recorded."""
    prepared = prepare_job(source, options, notify=view.notice)
    if dry_run:
        view.planned(prepared, make_plan(prepared, show_secrets=options.show_secrets))
        return
    view.prepared(prepared)
    if prepared.spec.sweep is not None:
        view.sweep(prepared, detach=detach, cancel=cancel_on_interrupt)
        return
    from cloudtrain.app.launch import launch_and_follow  # launch, fallbacks, following: not on --dry-run

    launch_and_follow(prepared, view, detach=detach, cancel_on_interrupt=cancel_on_interrupt, drain=drain)
