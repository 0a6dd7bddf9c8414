"""``cloudtrain cache`` (what the cache holds, and its size) and ``cloudtrain cache prune``."""

from __future__ import annotations

import click

from cloudtrain.cache import prune as prune_cache
from cloudtrain.cache import usage
from cloudtrain.cli._group import OUTPUT_OPTION, cli
from cloudtrain.console import counted, make_console, print_json, print_table
from cloudtrain.history import cache_dir
from cloudtrain.text.numbers import size


@cli.group(invoke_without_command=True)
@OUTPUT_OPTION
@click.pass_context
def cache(ctx: click.Context, output: str) -> None:
    """Show the cache folder's size: built packages, local environments, data, history."""
    if ctx.invoked_subcommand:
        return
    rows = usage()
    total = sum(r[2] for r in rows)
    if output == "json":
        print_json(
            {
                "folder": str(cache_dir()),
                "bytes": total,
                "items": [{"name": n, "entries": c, "bytes": b} for n, c, b in rows],
            }
        )
        return
    print_table(
        make_console(),
        ["item", "entries", "size"],
        [(n, c, size(b)) for n, c, b in rows] + [("total", "", size(total))],
        title=f"cache: {cache_dir()}",
    )
    click.echo("free space: cloudtrain cache prune --keep N (keeps the last N packages and environments)")


@cache.command()
@click.option(
    "--keep",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="Packages and environments to keep, the most recently used.",
)
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@OUTPUT_OPTION
def prune(keep: int, dry_run: bool, output: str) -> None:
    """Remove all but the last N built packages and local environments."""
    removed = prune_cache(keep, dry_run=dry_run)
    freed = sum(e.size for e in removed)
    if output == "json":
        print_json({"removed": [str(e.path) for e in removed], "bytes": freed, "dry_run": dry_run})
        return
    verb = "would remove" if dry_run else "removed"
    for entry in removed:
        click.echo(f"{verb} {entry.path} ({size(entry.size)})")
    click.echo(f"{verb} {counted(len(removed), 'item')}, {size(freed)}; kept the last {keep} packages and environments")
