"""Commands that never reach a cloud: validate, machines, package, schema."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from cloudtrain import backends, catalog
from cloudtrain.app.prepare import left_out, load_spec, package_dict
from cloudtrain.catalog import tpus
from cloudtrain.catalog.records import MachineInfo
from cloudtrain.cli._group import OUTPUT_OPTION, SET_OPTION, STRICT_OPTION, cli, config_argument, pick_config
from cloudtrain.config.records import json_schema
from cloudtrain.config.schema import JobConfig
from cloudtrain.console import counted, make_console, money, print_json, print_table
from cloudtrain.errors import ConfigError, UsageError
from cloudtrain.packaging import build_sdist


@cli.command()
@config_argument
@SET_OPTION
@STRICT_OPTION
@OUTPUT_OPTION
def validate(
    config_arg: str | None, config_path: str | None, overrides: tuple[str, ...], strict: bool, output: str
) -> None:
    """Check a config offline (no build, no upload). CONFIG may be given as an argument or with --config."""
    path = pick_config(config_arg, config_path)
    backends.check_plugins()
    try:
        loaded, spec = load_spec(path, overrides, strict=strict)
    except ConfigError as exc:
        if output == "json":  # every error as data too; the lines still go to stderr, exit 2
            print_json(
                {
                    "config": path,
                    "valid": False,
                    "errors": [
                        {"file": e.file, "line": e.line, "field": e.field, "message": e.detail, "fix": e.hint}
                        for e in getattr(exc, "errors", None) or (exc,)
                    ],
                }
            )
        raise
    m = spec.machine
    gpus = m.accelerators
    if output == "json":
        print_json(
            {
                "config": path,
                "valid": True,
                "backend": spec.backend,
                "cloud": spec.cloud,
                "region": spec.region,
                "name": spec.name,
                "machine_type": m.type,
                "gpu": m.gpu_model,
                "gpu_count": m.accelerator_count,
                "accelerator": m.accelerator,
                "replica_count": spec.replica_count,
                "image": spec.image_uri,
                "cost_per_hour": spec.cost_per_hour,
                "notes": list(spec.notes),
                "max_runtime": spec.max_runtime_seconds,
                "tensorflow": spec.tensorflow_version,
                "defaults": list(spec.defaults),
            }
        )
        return
    click.echo(
        f"{path}: OK ({spec.backend}, {spec.region}, {m.type}, {gpus}, {counted(spec.replica_count, 'replica')})"
    )
    for note in spec.notes:
        click.echo(note)


@cli.command()
@click.option("--backend", "cloud", type=click.Choice(catalog.clouds()), help="Only this cloud.")
@click.option("--gpu", help="Only this GPU model or family, e.g. T4, A100 (both sizes), A100-80GB, H100.")
@click.option(
    "--tpu",
    is_flag=True,
    help=f"{catalog.title(catalog.tpu_cloud())}'s single-host TPU VMs instead: chips, cores, topology, regions.",
)
@OUTPUT_OPTION
def machines(cloud: str | None, gpu: str | None, tpu: bool, output: str) -> None:
    """The machine catalog: every machine type with its GPUs, allowed counts and on-demand prices."""
    if tpu:
        _tpu_machines(cloud, gpu, output)
        return
    rows = catalog.machines(cloud, gpu, every_combination=True)
    if not rows:
        raise UsageError(f"no machine has GPU {gpu!r}", hint=f"the catalog has {', '.join(catalog.gpu_names(cloud))}")
    if output == "json":  # one object per valid combination
        print_json([catalog.machine_record(m) for m in rows])
        return
    print_table(
        make_console(),
        ["cloud", "machine", "vCPU", "memory GB", "GPU", "count", "GPU memory GB", "price/h", "price region"],
        _grouped(rows),
        title=f"prices: on-demand list prices taken {rows[0].price_date}; count: the GPU counts the machine takes",
    )


def _tpu_machines(cloud: str | None, gpu: str | None, output: str) -> None:
    tpu_title = catalog.title(catalog.tpu_cloud())
    without = catalog.title(cloud) if cloud and cloud != catalog.tpu_cloud() else None
    if without or gpu:
        raise UsageError(
            f"{without} has no TPUs" if without else "--tpu lists TPUs, not GPUs",
            hint=f"cloudtrain machines --tpu ({tpu_title})",
        )
    rows = tpus.machines()
    if output == "json":
        print_json([tpus.record(m) for m in rows])
        return
    print_table(
        make_console(),
        ["machine", "TPU", "chips", "cores", "topology", "vCPU", "memory GB", "price/h", "regions"],
        [
            (
                tpus.describe(m).split(" (")[0],
                tpu.generation,
                tpu.chips,
                tpu.cores,
                tpu.topology or "-",
                m.vcpus,
                m.memory_gb,
                money(m.price_per_hour) if m.price_per_hour else "-",
                ", ".join(tpus.regions(tpu.accelerator)),  # the machine's accelerator: Vertex's TPU name
            )
            for m in rows
            if (tpu := m.tpu) is not None  # every row of tpus.machines() is a TPU VM
        ],
        title=f"{tpu_title} TPU VMs, one host each; prices: {rows[0].price_region} on-demand list prices taken "
        f"{rows[0].price_date}; TensorFlow images: {', '.join(tpus.tensorflow_versions())}",
    )


def _grouped(rows: Sequence[MachineInfo]) -> list[tuple[Any, ...]]:
    """One line per machine type and GPU; a machine that takes 1, 2 or 4 GPUs lists them on that line."""
    groups: dict[tuple[str, str, str | None], list[MachineInfo]] = {}
    for m in rows:
        groups.setdefault((m.cloud, m.machine_type, m.gpu.name if m.gpu else None), []).append(m)
    lines = []
    for (cloud, machine, gpu), combos in groups.items():
        m = combos[0]
        prices = [c.price_per_hour for c in combos if c.price_per_hour is not None]
        price = (
            "-"
            if not prices
            else money(min(prices))
            if len(set(prices)) <= 1
            else f"{money(min(prices))}-{money(max(prices))}"
        )
        lines.append(
            (
                cloud,
                machine,
                m.vcpus,
                m.memory_gb,
                gpu or "-",
                ", ".join(str(c.accelerator_count) for c in combos),
                m.gpu.memory_gb if m.gpu else "-",
                price if prices else "-",
                m.price_region,
            )
        )
    return lines


@cli.command()
@click.argument("path", type=click.Path())
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="dist", show_default=True)
@click.option("--requirement", "-r", "requirements", multiple=True, help="Extra requirement (repeatable).")
@click.option(
    "--include",
    "include",
    multiple=True,
    metavar="PATTERN",
    help="Package credential-like files matching PATTERN all the same, with a warning (repeatable).",
)
@OUTPUT_OPTION
def package(path: str, out_dir: str, requirements: tuple[str, ...], include: tuple[str, ...], output: str) -> None:
    """Build the deterministic sdist of a package directory and print its path and hash.

    Name, version and requirements come from the package's own setup.py / pyproject.toml (as
    with submit), so the same folder gives the same artifact either way."""
    built = build_sdist(Path(path), Path(out_dir), requirements=requirements, given_in="--requirement", include=include)
    for warning in built.warnings:
        click.echo(f"warning: {warning}", err=True)
    if output == "json":
        print_json(package_dict(built))
    else:
        click.echo(f"{built.path}\nsha256 {built.sha256}  {built.size:,} bytes\nmetadata: {built.metadata}")
        if built.left_out:
            click.echo(f"left out: {left_out(built)}")


@cli.command()
def schema() -> None:
    """Print the config's JSON Schema (for editors: yaml-language-server)."""
    click.echo(json.dumps(json_schema(JobConfig), indent=2))
