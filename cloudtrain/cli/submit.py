"""``cloudtrain submit``: build, upload, create, follow."""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from cloudtrain.app.launch import launch
from cloudtrain.app.notices import Notice
from cloudtrain.app.plan import make_plan
from cloudtrain.app.prepare import left_out, load_spec, prepare, resumed, with_include
from cloudtrain.app.reattach import reattach_command
from cloudtrain.backends import get_backend
from cloudtrain.catalog import built_in_gpus
from cloudtrain.catalog.cost import price_basis
from cloudtrain.cli._follow import follow, print_hints
from cloudtrain.cli._group import (
    DRAIN_OPTION,
    OUTPUT_OPTION,
    SET_OPTION,
    STRICT_OPTION,
    cli,
    config_argument,
    debug_enabled,
    pick_config,
)
from cloudtrain.cli.sweep import submit_sweep
from cloudtrain.config import LoadedConfig
from cloudtrain.config.schema import Sweep
from cloudtrain.console import Console, counted, escape, make_console, money, print_json, print_kv
from cloudtrain.creation_window import CreatedThenInterrupted
from cloudtrain.data.staging import describe
from cloudtrain.errors import UsageError
from cloudtrain.events import epochs_in_args
from cloudtrain.numbers import duration
from cloudtrain.packaging import BuiltPackage
from cloudtrain.progress import Progress
from cloudtrain.secrets.masking import mask_args
from cloudtrain.spec import JobSpec


@cli.command()
@config_argument
@SET_OPTION
@click.option("--dry-run", is_flag=True, help="Build the package and print the request; upload and create nothing.")
@click.option("--local", is_flag=True, help="Run the job on this machine under the cloud's environment contract.")
@click.option("--detach", is_flag=True, help="Return after the job is created instead of streaming its logs.")
@click.option("--cancel-on-interrupt", is_flag=True, help="On Ctrl-C cancel the cloud job instead of detaching.")
@click.option(
    "--resume",
    "resume_job",
    metavar="JOB",
    help="Continue JOB's checkpoints (a job of this config, stopped or preempted) in a new job.",
)
@click.option(
    "--include",
    "include",
    multiple=True,
    metavar="PATTERN",
    help="Package files matching PATTERN (gitignore syntax, in the package folder) that look like "
    "credentials and would be left out; with a warning (repeatable).",
)
@click.option(
    "--show-secrets",
    is_flag=True,
    help="Show env: values that look secret (shown as ***) in the text output, on a terminal only.",
)
@STRICT_OPTION
@DRAIN_OPTION
@OUTPUT_OPTION
def submit(
    config_arg: str | None,
    config_path: str | None,
    overrides: tuple[str, ...],
    dry_run: bool,
    local: bool,
    detach: bool,
    cancel_on_interrupt: bool,
    resume_job: str | None,
    include: tuple[str, ...],
    show_secrets: bool,
    strict: bool,
    drain: float | None,
    output: str,
) -> None:
    """Build, upload and run a job; stream its logs; exit with the job's outcome.

    CONFIG may be given as an argument or with --config."""
    if show_secrets:
        refuse_show_secrets(output)
    loaded, spec = load_spec(pick_config(config_arg, config_path), overrides, local=local, strict=strict)
    spec = with_include(spec, include)
    if resume_job:
        spec = resumed(spec, get_backend(spec.backend), resume_job)
    run_submit(
        loaded,
        spec,
        dry_run=dry_run,
        detach=detach,
        cancel_on_interrupt=cancel_on_interrupt,
        output=output,
        overrides=overrides,
        drain=drain,
        show_secrets=show_secrets,
    )


def refuse_show_secrets(output: str) -> None:
    """``--show-secrets`` is for a person at a terminal: never into JSON, a pipe or a file."""
    if output == "json" or not sys.stdout.isatty():
        where = "-o json" if output == "json" else "output that is not a terminal"
        raise UsageError(
            f"--show-secrets is refused with {where}: secret values would end up in a file or another program",
            hint="drop --show-secrets (values show as ***), or run it in a terminal",
        )


def run_submit(
    loaded: LoadedConfig,
    spec: JobSpec,
    *,
    dry_run: bool,
    detach: bool,
    cancel_on_interrupt: bool,
    output: str,
    overrides: Sequence[str] = (),
    drain: float | None = None,
    show_secrets: bool = False,
) -> None:
    """The one submit path, for ``submit`` and the gcloud forms: the app layer prepares, plans or
    launches (:mod:`cloudtrain.app`); this prints what it reports and follows the job to its end
    unless ``detach``."""
    console = make_console(sys.stderr if output == "json" else None)
    notify = _printer(console)
    prepared = prepare(loaded, spec, overrides=overrides, show_secrets=show_secrets, notify=notify)
    spec, package = prepared.spec, prepared.package
    if dry_run:
        plan = make_plan(prepared, show_secrets=show_secrets)
        if output == "json":
            print_json(plan.to_dict())
            return
        _print_summary(console, spec, package)
        console.print("\n[bold]Request[/bold] (nothing was uploaded or created):")
        _print_request(console, plan.request)
        for number, candidate in enumerate(plan.fallbacks, 1):
            console.print(f"\n[bold]Fallback {number}[/bold], if the ones before it get no capacity:")
            _print_summary(console, candidate.spec, package)
            _print_request(console, candidate.request)
        return
    _print_summary(console, spec, package)
    if spec.sweep is not None:
        submit_sweep(console, prepared, detach=detach, output=output)
        return
    try:
        launched = launch(prepared, notify=notify, detach=detach)
    except CreatedThenInterrupted as interrupted:  # Ctrl-C while the job was being created: it is recorded
        handle = interrupted.created.handle
        console.print(f"[bold]Job[/bold] {handle.job_id} created")
        console.print(f"\n[yellow]Detached; job {handle.job_id} keeps running.[/yellow]")
        print_hints(console, handle.job_id, reattach_command(handle, drain))
        raise SystemExit(130) from None
    if launched.index:
        console.print(f"[bold]Landed on fallback {launched.index}[/bold]:")
        _print_summary(console, launched.spec, launched.package)
    handle, spec, first = launched.handle, launched.spec, launched.first
    backend = get_backend(spec.backend)
    if backend.runs_here:
        console.print(f"[bold]Run[/bold] {handle.job_id} started in {first.name}")
    else:
        console.print(
            f"[bold]Job[/bold] {handle.job_id} created" + (f": {first.console_url}" if first.console_url else "")
        )
    if detach:
        print_hints(console, handle.job_id, reattach_command(handle, drain))
        if output == "json":
            print_json(first.to_dict())
        return
    progress = Progress(
        cost_per_hour=spec.cost_per_hour if backend.billed else None,
        started=spec.created.timestamp(),
        epochs=epochs_in_args(spec.module_args()),
    )
    progress.start_from(first)
    follow(
        console,
        handle,
        cancel_on_interrupt=cancel_on_interrupt or backend.runs_here,  # a run here dies with this process
        progress=progress,
        live=output != "json",
        output=output,
        debug=debug_enabled(),
        drain=drain,
    )


def _print_request(console: Console, request: dict[str, Any]) -> None:
    """The request as JSON, with each multi-line text in it (a batch script) printed as its lines after it."""
    texts = {key: value for key, value in request.items() if isinstance(value, str) and "\n" in value}
    console.print_json(data={key: value for key, value in request.items() if key not in texts})
    for key, text in texts.items():
        console.print(f"\n[bold]{key}[/bold]:")
        console.print(escape(text.rstrip("\n")))


def _printer(console: Console) -> Callable[[Notice], None]:
    """The app layer's notices as the CLI shows them: warnings on stderr, fallback moves in yellow."""

    def show(notice: Notice) -> None:
        if notice.kind == "warning":
            click.echo(f"warning: {notice.text}", err=True)
        else:
            console.print(f"[yellow]{escape(notice.text)}[/yellow]")

    return show


def _print_summary(console: Console, spec: JobSpec, package: BuiltPackage | None) -> None:
    backend = get_backend(spec.backend)
    local = backend.runs_here
    machine = f"{spec.machine.type}, {spec.machine.accelerators}"
    machine += f", × {counted(spec.replica_count, 'replica')}" if spec.replica_count > 1 else ""
    cost = spec.cost_per_hour if backend.billed else None
    print_kv(
        console,
        f"cloudtrain · {spec.job_name}",
        [
            (
                "backend",
                f"{spec.backend}: {backend.title}, following the {spec.cloud} contract" if local else spec.backend,
            ),
            ("region", None if local else spec.region),
            (
                "project",
                spec.project + (f" (from {spec.project_source})" if spec.project_source else "")
                if spec.project and not local
                else None,
            ),
            (
                "machine",
                f"{counted(spec.replica_count, 'process', 'processes')} here; in the cloud: {machine}"
                if local
                else machine,
            ),
            (
                "image",
                None
                if local or spec.container
                else f"none: TensorFlow {spec.tensorflow_version} in a Python environment built for the job"
                if backend.image_registry is None  # a cluster: no image runs, only its TensorFlow version counts
                else spec.image_uri
                + (
                    f" (TensorFlow {spec.tensorflow_version}, the newest image: the default)"
                    if "image.tensorflow" in spec.defaults
                    else ""
                ),
            ),
            (
                "package",
                f"{package.filename} ({package.size:,} bytes, sha256 {package.sha256[:12]})"
                if package
                else "none: your own container runs as it is, nothing is uploaded",
            ),
            ("left out", left_out(package) if package else None),
            ("metadata", package.metadata if package else None),
            ("requires", ", ".join(package.requirements) or None if package else None),
            _run_row(spec),
            ("secrets", ", ".join(f"{name} ← {ref}" for name, ref in spec.secrets.items()) or None),
            *(_data_rows(spec).items()),
            ("output", spec.output_dir + (" (the job dir, as given)" if spec.job_dir == spec.output_dir else "")),
            (
                "staging",
                None if local or not spec.package_prefix or not package else f"{spec.package_prefix}/{package.sha256}/",
            ),
            ("spot", "yes" if spec.spot else None),
            *spec.backend_settings.summary_rows(),
            ("sweep", _sweep_line(spec.sweep)),
            ("batch", _batch_line(spec)),
            ("resume", f"{spec.resume.job_id}: {spec.resume.checkpoint_dir}" if spec.resume else None),
            (
                "cost/hour",
                None
                if cost is None
                else f"{money(cost)} for {_machines(spec)} ({spec.machine.price_region} "
                f"{price_basis(spec)}, {spec.machine.price_date}"
                + (
                    f"; the job runs in {spec.region}, whose price may differ)"
                    if spec.region != spec.machine.price_region
                    else ")"
                ),
            ),
            (
                "estimate",
                None
                if cost is None or not spec.expected_hours
                else _per_trial(spec, cost * spec.expected_hours)
                + f" for {duration(spec.expected_hours * 3600)} (budget.max_hours × cost/hour)",
            ),
            ("cost cap", None if cost is None else _cost_cap(spec)),
            (
                "max runtime",
                f"{duration(spec.max_runtime_seconds)} (default)"
                if cost is None and "max_runtime" in spec.defaults
                else None,
            ),
        ],
    )
    for note in spec.notes:
        console.print(f"[yellow]mapped:[/yellow] {escape(note.removeprefix('mapped: '))}")


def _cost_cap(spec: JobSpec) -> str | None:
    """Every replica running until max_runtime: the budget's cap when ``budget.max_usd`` cut it."""
    if spec.max_cost is None:  # no price for its machine
        return None
    cap, span = _per_trial(spec, spec.max_cost), duration(spec.max_runtime_seconds)
    if spec.budget_usd:
        return f"{cap}: max_runtime {span}, cut to fit budget.max_usd {money(spec.budget_usd)}"
    default = ", the default" if "max_runtime" in spec.defaults else ""
    return f"{cap} if it runs until max_runtime ({span}{default})"


def _machines(spec: JobSpec) -> str:
    """What the hourly price pays for: ``1 × n1-standard-16 + 4 × T4`` (GPUs attached to the machine),
    ``1 × ml.g4dn.12xlarge (4 × T4)`` (GPUs built in), ``2 × (n1-standard-16 + 4 × T4)``."""
    m = spec.machine
    if not m.accelerator_count or m.tpu_cores or not m.gpu_model:
        return f"{spec.replica_count} × {m.type}"
    gpus = f"{m.accelerator_count} × {m.gpu_model}"
    if built_in_gpus(spec.cloud, m.type):
        return f"{spec.replica_count} × {m.type} ({gpus})"
    one = f"{m.type} + {gpus}"
    return f"1 × {one}" if spec.replica_count == 1 else f"{spec.replica_count} × ({one})"


def _per_trial(spec: JobSpec, usd: float) -> str:
    """A job's amount; a sweep's per trial and for all its trials (each trial is one such job)."""
    if spec.sweep is None:
        return money(usd)
    trials = spec.sweep.max_trials
    return f"{money(usd)} per trial, {money(usd * trials)} for the sweep's {counted(trials, 'trial')}"


def _data_rows(spec: JobSpec) -> dict[str, str]:
    return {f"data {name}": line for name, line in describe(spec).items()}


def _batch_line(spec: JobSpec) -> str | None:
    """The global batch the trainer will use: per replica × replicas (it scales it; printed again when a
    fallback changes the GPU count)."""
    per_replica = next(
        (int(m[1]) for a in spec.module_args() if (m := re.fullmatch(r"--batch[-_]size=(\d+)", a))), None
    )
    replicas = spec.machine.replicas_per_machine * spec.replica_count
    if per_replica is None or get_backend(spec.backend).runs_here:
        return None
    unit = "TPU cores" if spec.machine.tpu_cores else "GPUs × machines"
    return f"global {per_replica * replicas} = {per_replica} per replica × {counted(replicas, 'replica')} ({unit})"


def _sweep_line(sweep: Sweep | None) -> str | None:
    if sweep is None:
        return None
    params = ", ".join(sweep.params)
    return (
        f"{sweep.goal} {sweep.metric} over {params}: {counted(sweep.max_trials, 'trial')}, "
        f"{sweep.parallel_trials} at a time, {sweep.algorithm}" + (", early stopping" if sweep.early_stopping else "")
    )


def _run_row(spec: JobSpec) -> tuple[str, str]:
    """What the job runs; a script's ``--model_dir`` value depends on where it runs."""
    if spec.container:  # ENTRYPOINT: the image's own, when no command is given
        command = " ".join(shlex.quote(c) for c in spec.container.command) or "ENTRYPOINT"
        args = " ".join(shlex.quote(a) for a in mask_args(spec.module_args()))
        return "container", f"{spec.container.image_uri}: {command} {args}".rstrip()
    if spec.package.script:  # secret-named options and credentials show as *** (--dry-run's request shows them too)
        args = " ".join(shlex.quote(a) for a in mask_args(spec.script_args("MODEL_DIR")))
        return "script", f"python {spec.package.script} {args}".rstrip() + f"  (in {spec.package.path})"
    return "module", f"python -m {spec.package.module} {' '.join(mask_args(spec.module_args()))}".rstrip()
