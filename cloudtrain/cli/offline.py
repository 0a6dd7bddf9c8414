"""Commands that never reach a cloud: validate, machines, package, schema."""

from __future__ import annotations

from pathlib import Path

import click

from cloudtrain.cli._common import load_spec, package_dict
from cloudtrain.cli._group import OUTPUT_OPTION, SET_OPTION, STRICT_OPTION, cli
from cloudtrain.errors import UsageError


@cli.command()
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False))
@SET_OPTION
@STRICT_OPTION
def validate(config_path, overrides, strict) -> None:
    """Check a config offline (no build, no upload)."""
    loaded, spec = load_spec(config_path, overrides, strict=strict)
    click.echo(f"{config_path}: OK ({spec.backend}, {spec.machine.type}, "
               f"{spec.machine.accelerator_count} × {spec.machine.gpu_model or 'CPU'} × {spec.replica_count})")  # fmt: skip
    for note in spec.notes:
        click.echo(f"mapped: {note}")


@cli.command()
@click.option("--backend", "cloud", type=click.Choice(["vertex", "sagemaker"]), help="Only this cloud.")
@click.option("--gpu", help="Only this GPU model, e.g. T4, A100, H100.")
@OUTPUT_OPTION
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
@OUTPUT_OPTION
def package(path, out_dir, requirements, output) -> None:
    """Build the deterministic sdist of a package directory and print its path and hash.

    Name, version and requirements come from the package's own setup.py / pyproject.toml (as
    with submit), so the same folder gives the same artifact either way."""
    from cloudtrain.packaging import build_sdist

    built = build_sdist(Path(path), Path(out_dir), requirements=requirements, given_in="--requirement")
    for warning in built.warnings:
        click.echo(f"warning: {warning}", err=True)
    if output == "json":
        from cloudtrain.console import print_json

        print_json(package_dict(built))
    else:
        click.echo(f"{built.path}\nsha256 {built.sha256}  {built.size:,} bytes\nmetadata: {built.metadata}")


@cli.command()
def schema() -> None:
    """Print the config's JSON Schema (for editors: yaml-language-server)."""
    import json

    from cloudtrain.config import JobConfig

    click.echo(json.dumps(JobConfig.model_json_schema(), indent=2))


