"""The ``cloudtrain`` command line: one error funnel, lazy backends.

Every user-facing failure is a :class:`CloudtrainError`: one ``error:`` line, exit code 2
for bad input, the traceback only with ``--debug``. Cloud SDKs and TensorFlow are imported
only by the backend a command actually uses.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import click

from cloudtrain import __version__
from cloudtrain.errors import CloudtrainError, UsageError

_CONFIG = click.option("--config", "-c", "config_path", type=click.Path(dir_okay=False), help="Job config YAML.")
_SET = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a config value.")
_OUTPUT = click.option("--output", "-o", type=click.Choice(["text", "json"]), default="text", show_default=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.version_option(__version__, prog_name="cloudtrain")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Submit a TensorFlow training package to Vertex AI or SageMaker, or run it here.

    \b
      cloudtrain submit --config job_configs/gpu4.yaml --dry-run   # the exact request
      cloudtrain submit --config job_configs/gpu4.yaml --local     # run it on this machine
      cloudtrain submit --config job_configs/gpu4.yaml             # run it in the cloud
    """
    ctx.obj = {"debug": debug}
    _show_backend_notes(debug)


def _show_backend_notes(debug: bool) -> None:
    """Backends report steps ("uploaded s3://…") on the ``cloudtrain.*`` loggers: show them on stderr."""
    import logging

    class ToStderr(logging.Handler):  # looks sys.stderr up per line, so it follows redirection
        def emit(self, record: logging.LogRecord) -> None:
            click.echo(record.getMessage(), err=True)

    logger = logging.getLogger("cloudtrain")
    if not any(type(h).__name__ == "ToStderr" for h in logger.handlers):
        logger.addHandler(ToStderr())
    logger.setLevel(logging.DEBUG if debug else logging.INFO)


# --------------------------------------------------------------------------- submit


@cli.command()
@_CONFIG
@_SET
@click.option("--dry-run", is_flag=True, help="Build the package and print the request; upload and create nothing.")
@click.option("--local", is_flag=True, help="Run the job on this machine under the cloud's environment contract.")
@click.option("--detach", is_flag=True, help="Return after the job is created instead of streaming its logs.")
@click.option("--cancel-on-interrupt", is_flag=True, help="On Ctrl-C cancel the cloud job instead of detaching.")
@_OUTPUT
def submit(config_path, overrides, dry_run, local, detach, cancel_on_interrupt, output) -> None:
    """Build, upload and run a job; stream its logs; exit with the job's outcome."""
    from cloudtrain.backends import get_backend
    from cloudtrain.console import make_console

    loaded, spec = _load_spec(config_path, overrides, local=local)
    package = _build_package(spec)
    backend = get_backend(spec.backend)
    console = make_console(sys.stderr if output == "json" else None)
    if dry_run:
        request = backend.render(spec, package)
        if output == "json":
            from cloudtrain.console import print_json

            print_json({"backend": spec.backend, "region": spec.region, "package": _package_dict(package),
                        "request": request})  # fmt: skip
        else:
            _print_summary(console, spec, package)
            console.print("\n[bold]Request[/bold] (nothing was uploaded or created):")
            console.print_json(data=request)
        return
    _print_summary(console, spec, package)
    handle = backend.submit(spec, package)
    first = handle.status()
    _remember(handle.job_id, first.name, spec, loaded.file)
    console.print(f"[bold]Job[/bold] {handle.job_id} created" + (f": {first.console_url}" if first.console_url else ""))
    if detach:
        _print_hints(console, handle.job_id)
        return
    _follow(console, handle, cancel_on_interrupt=cancel_on_interrupt or spec.backend == "local")


def _load_spec(config_path: str | None, overrides, *, local: bool = False):
    from cloudtrain.config import load_config
    from cloudtrain.spec import build_spec

    if not config_path:
        raise UsageError("no config given", hint="pass --config job_configs/gpu4.yaml")
    loaded = load_config(config_path, overrides, local=local)
    return loaded, build_spec(loaded)


def _build_package(spec):
    from cloudtrain.history import cache_dir
    from cloudtrain.packaging import build_sdist

    package = build_sdist(
        spec.package.path,
        cache_dir() / "packages",
        name=spec.package.name,
        version=spec.package.version,
        requirements=spec.package.requirements,
    )
    for warning in package.warnings:
        click.echo(f"warning: {warning}", err=True)
    return package


def _package_dict(package) -> dict[str, Any]:
    return {"file": str(package.path), "sha256": package.sha256, "size": package.size}


def _print_summary(console, spec, package) -> None:
    from cloudtrain.console import money, print_kv

    local = spec.backend == "local"
    gpus = f"{spec.machine.gpu_model} × {spec.machine.accelerator_count}" if spec.machine.accelerator_count else "no GPU"
    machine = f"{spec.machine.type}, {gpus}, × {spec.replica_count} replica(s)"
    cost = None if local else spec.cost_per_hour
    print_kv(
        console,
        f"cloudtrain · {spec.job_name}",
        [
            ("backend", f"local: this machine, following the {spec.cloud} contract" if local else spec.backend),
            ("region", None if local else spec.region),
            ("machine", f"{spec.replica_count} process(es) here; in the cloud: {machine}" if local else machine),
            ("image", None if local else spec.image_uri),
            ("package", f"{package.filename} ({package.size:,} bytes, sha256 {package.sha256[:12]})"),
            ("module", f"python -m {spec.package.module} {' '.join(spec.module_args())}".rstrip()),
            ("output", spec.output_dir),
            ("spot", "yes" if spec.spot else None),
            ("cost/hour", None if cost is None else
             f"{money(cost)} ({spec.machine.price_region} on-demand list price, {spec.machine.price_date})"),
            ("cost cap", None if cost is None else
             f"{money(spec.max_cost)} if it runs until max_runtime ({spec.max_runtime_seconds / 3600:g} h)"),
        ],
    )  # fmt: skip


def _remember(job_id: str, name: str, spec, config_file: Path) -> None:
    from cloudtrain.history import JobRecord, record

    record(JobRecord(job_id, name, spec.backend, spec.region, spec.project, str(config_file)))


def _follow(console, handle, *, cancel_on_interrupt: bool) -> None:
    """Stream logs until the job ends; exit with its outcome. Ctrl-C detaches or cancels."""
    from cloudtrain.console import ReplicaPrinter

    printer = ReplicaPrinter(console)
    try:
        for line in handle.logs(follow=True):
            printer(line)
        status = handle.wait()
    except KeyboardInterrupt:
        if not cancel_on_interrupt:
            console.print(f"\n[yellow]Detached; job {handle.job_id} keeps running.[/yellow]")
            _print_hints(console, handle.job_id)
            raise SystemExit(130) from None
        console.print(f"\n[yellow]Cancelling job {handle.job_id}…[/yellow]")
        handle.cancel()
        status = handle.wait()
    _finish(console, status)


def _print_hints(console, job_id: str) -> None:
    console.print(f"  reattach: cloudtrain logs {job_id} --follow")
    console.print(f"  cancel:   cloudtrain cancel {job_id}")


def _finish(console, status) -> None:
    """Print the summary; exit 0 only on success, else the job's own code where it has one."""
    from cloudtrain.console import print_kv, summary_rows
    from cloudtrain.errors import JobFailed

    print_kv(console, f"Job {status.job_id}: {status.state.value}", summary_rows(status.details))
    if status.state.exit_code:
        error = JobFailed(f"job {status.job_id} ended {status.state.value}" + (f": {status.message}" if status.message else ""))
        error.exit_code = status.details.get("exit_code") or status.state.exit_code
        raise error


# --------------------------------------------------------------------------- offline commands


@cli.command()
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False))
@_SET
def validate(config_path, overrides) -> None:
    """Check a config offline (no build, no upload)."""
    loaded, spec = _load_spec(config_path, overrides)
    click.echo(f"{config_path}: OK ({spec.backend}, {spec.machine.type}, "
               f"{spec.machine.accelerator_count} × {spec.machine.gpu_model or 'CPU'} × {spec.replica_count})")  # fmt: skip


@cli.command()
@click.option("--backend", "cloud", type=click.Choice(["vertex", "sagemaker"]), help="Only this cloud.")
@click.option("--gpu", help="Only this GPU model, e.g. T4, A100, H100.")
@_OUTPUT
def machines(cloud, gpu, output) -> None:
    """The machine catalog with GPUs and on-demand prices."""
    from cloudtrain import catalog
    from cloudtrain.console import make_console, money, print_json, print_table

    rows = catalog.machines(cloud, gpu)
    if not rows:
        raise UsageError(f"no machine has GPU {gpu!r}", hint="try T4, V100, A100, H100 or L4")
    if output == "json":
        from dataclasses import asdict

        print_json([asdict(m) for m in rows])
        return
    print_table(
        make_console(),
        ["cloud", "machine", "vCPU", "memory GB", "GPU", "count", "GPU memory GB", "price/h", "price region"],
        [(m.cloud, m.machine_type, m.vcpus, m.memory_gb, m.gpu.name if m.gpu else "-", m.accelerator_count,
          m.gpu.memory_gb if m.gpu else "-", money(m.price_per_hour), m.price_region) for m in rows],  # fmt: skip
        title=f"prices: on-demand list prices taken {rows[0].price_date}",
    )


@cli.command()
@click.argument("path", type=click.Path())
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="dist", show_default=True)
@click.option("--requirement", "-r", "requirements", multiple=True, help="Extra requirement (repeatable).")
@_OUTPUT
def package(path, out_dir, requirements, output) -> None:
    """Build the deterministic sdist of a package directory and print its path and hash."""
    from cloudtrain.packaging import build_sdist

    built = build_sdist(Path(path), Path(out_dir), requirements=requirements)
    for warning in built.warnings:
        click.echo(f"warning: {warning}", err=True)
    if output == "json":
        from cloudtrain.console import print_json

        print_json(_package_dict(built))
    else:
        click.echo(f"{built.path}\nsha256 {built.sha256}  {built.size:,} bytes")


@cli.command()
def schema() -> None:
    """Print the config's JSON Schema (for editors: yaml-language-server)."""
    import json

    from cloudtrain.config import JobConfig

    click.echo(json.dumps(JobConfig.model_json_schema(), indent=2))


# --------------------------------------------------------------------------- job commands

_JOB_OPTIONS = [
    click.option("--backend", type=click.Choice(["vertex", "sagemaker", "local"]), help="Default: from history."),
    click.option("--region", help="Default: from history or --config."),
    click.option("--project", help="Vertex project. Default: from history or --config."),
    _CONFIG,
]


def _job_options(func):
    for option in reversed(_JOB_OPTIONS):
        func = option(func)
    return func


_VERTEX_NAME = re.compile(r"^projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/customJobs/(?P<id>\d+)$")
_SAGEMAKER_ARN = re.compile(r"^arn:aws[a-z-]*:sagemaker:(?P<region>[^:]+):\d+:training-job/(?P<id>.+)$")


def _where(job_id: str | None, backend, region, project, config_path) -> tuple[Any, str, str, str | None]:
    """Find backend, region, project for a job: flags, then --config, then the full name, then history."""
    from cloudtrain.backends import get_backend

    if config_path and not (backend and region):
        loaded, _ = _load_spec(config_path, ())
        cfg = loaded.config
        backend, region, project = backend or cfg.backend, region or cfg.region, project or cfg.project
    if job_id and not backend:
        if match := _VERTEX_NAME.match(job_id):
            backend, region, project, job_id = "vertex", match["region"], match["project"], match["id"]
        elif match := _SAGEMAKER_ARN.match(job_id):
            backend, region, job_id = "sagemaker", match["region"], match["id"]
        else:
            from cloudtrain.history import find

            entry = find(job_id)
            if entry:
                backend, region, project = entry.backend, region or entry.region, project or entry.project
    if not backend or not region:
        what = f"job {job_id!r} is not in this machine's history" if job_id else "no backend or region given"
        raise UsageError(what, hint="pass --backend and --region (or --config CONFIG)")
    return get_backend(backend), job_id, region, project


@cli.command()
@click.argument("job_id", metavar="JOB")
@_job_options
@_OUTPUT
def status(job_id, backend, region, project, config_path, output) -> None:
    """Show a job's state."""
    from cloudtrain.console import flatten, make_console, print_json, print_kv

    impl, job_id, region, project = _where(job_id, backend, region, project, config_path)
    result = impl.attach(job_id, region=region, project=project).status()
    if output == "json":
        print_json(result.to_dict())
        return
    rows = [(k, v) for k, v in result.to_dict().items() if k != "details"]
    print_kv(make_console(), f"Job {result.job_id}", rows + flatten(result.details))


@cli.command()
@click.argument("job_id", metavar="JOB")
@click.option("--follow", "-f", is_flag=True, help="Keep streaming until the job ends.")
@_job_options
@_OUTPUT
def logs(job_id, follow, backend, region, project, config_path, output) -> None:
    """Print a job's logs; with --follow, stream until it ends and exit with its outcome."""
    import json

    from cloudtrain.console import ReplicaPrinter, make_console

    impl, job_id, region, project = _where(job_id, backend, region, project, config_path)
    handle = impl.attach(job_id, region=region, project=project)
    console = make_console()
    if output == "json":
        for line in handle.logs(follow=follow):
            click.echo(json.dumps({"timestamp": line.timestamp.isoformat(), "replica": line.replica,
                                   "severity": line.severity, "message": line.message}))  # fmt: skip
        return
    if follow:
        _follow(console, handle, cancel_on_interrupt=False)
        return
    printer = ReplicaPrinter(console)
    for line in handle.logs(follow=False):
        printer(line)


@cli.command()
@click.argument("job_id", metavar="JOB")
@click.option("--wait/--no-wait", default=True, show_default=True, help="Wait until the cancel has taken effect.")
@_job_options
@_OUTPUT
def cancel(job_id, wait, backend, region, project, config_path, output) -> None:
    """Cancel (stop) a job."""
    from cloudtrain.console import make_console, print_json

    impl, job_id, region, project = _where(job_id, backend, region, project, config_path)
    handle = impl.attach(job_id, region=region, project=project)
    result = handle.cancel()
    if wait:
        result = handle.wait()
    if output == "json":
        print_json(result.to_dict())
    else:
        make_console().print(f"Job {result.job_id}: {result.state.value}")


@cli.command(name="list")
@click.option("--limit", default=20, show_default=True)
@_job_options
@_OUTPUT
def list_jobs(limit, backend, region, project, config_path, output) -> None:
    """List recent jobs in a region."""
    from cloudtrain.console import make_console, print_json, print_table

    impl, _, region, project = _where(None, backend, region, project, config_path)
    jobs = impl.list_jobs(region=region, project=project, limit=limit)
    if output == "json":
        print_json([j.to_dict() for j in jobs])
        return
    print_table(make_console(), ["job", "state", "created", "message"],
                [(j.job_id, j.state.value, j.created, j.message) for j in jobs])  # fmt: skip


# --------------------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; turn every CloudtrainError into one line and an exit code."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        cli.main(args=args, prog_name="cloudtrain", standalone_mode=False)
        return 0
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except SystemExit as exc:  # a command that chose its exit code (detaching on Ctrl-C: 130)
        return exc.code if isinstance(exc.code, int) else 1
    except CloudtrainError as exc:
        if debug:
            raise
        click.echo(f"error: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        if debug:
            raise
        click.echo("Interrupted.", err=True)
        return 130


if __name__ == "__main__":
    sys.exit(main())
