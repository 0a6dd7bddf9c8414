"""``cloudtrain init --from-estimator FILE.py``: a config from a SageMaker TensorFlow estimator. SageMaker's
own CLI command, which the registry lists (``register(..., commands=...)``) and the CLI loads when asked."""

from __future__ import annotations

import os
from pathlib import Path

import click

from cloudtrain.backends.sagemaker.estimator import MAX_ESTIMATOR_BYTES, Translation, to_yaml, translate_estimator
from cloudtrain.errors import UsageError
from cloudtrain.statefiles import read_regular, write_atomic
from cloudtrain.text import counted

_ALONE = (
    "# By cloudtrain init --from-estimator: the estimator has no source_dir, so SageMaker uploads {0} alone\n*\n!{0}\n"
)


def _entry_alone(folder: Path, translation: Translation) -> None:
    """Package the entry point alone, as SageMaker uploads it without ``source_dir``: an ignore file in its
    folder leaves out the rest (the notebook, its downloaded data); one the folder already has is kept."""
    ignore, entry = folder / ".cloudtrainignore", str(translation.entry_alone)
    if ignore.exists():
        click.echo(f"{ignore} exists: SageMaker uploads {entry} alone; make it leave out the rest", err=True)
        return
    write_atomic(ignore, _ALONE.format(entry))
    translation.done.append(f"package: wrote {ignore}, so that {entry} is packaged alone, as SageMaker uploads it")


@click.command("init")
@click.option(
    "--from-estimator",
    "estimator",
    required=True,
    type=click.Path(dir_okay=False),
    help="Python file that creates a sagemaker TensorFlow(...) estimator (read, never run).",
)
@click.option("--to", "to", type=click.Path(dir_okay=False), help="Write the config here (default: print it).")
@click.option("--force", is_flag=True, help="Overwrite an existing --to file.")
def init(estimator: str, to: str | None, force: bool) -> None:
    """Write a script-mode config from an estimator's literal arguments; list what to fill in."""
    try:  # a regular file of at most 1 MiB: a FIFO, a device or a huge file is refused unread
        source = read_regular(Path(estimator), limit=MAX_ESTIMATOR_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {estimator!r}: {exc}", hint="pass the estimator's .py file") from None
    translation = translate_estimator(source, estimator)
    package = translation.config.get("package")
    if to is not None and Path(to).exists() and not force:
        raise UsageError(f"{to} exists", hint="choose another --to, or add --force")
    if to is not None and isinstance(package, dict) and isinstance(package.get("path"), str):
        # the estimator's paths are relative to its own folder; a config's, to the config's folder
        source_folder = Path(estimator).resolve().parent / package["path"]
        package["path"] = os.path.relpath(source_folder, Path(to).resolve().parent)
        if translation.entry_alone:
            _entry_alone(source_folder, translation)
    text = to_yaml(translation, estimator)
    if to is None:
        click.echo(text, nl=False)
    else:
        write_atomic(Path(to), text)
        click.echo(f"wrote {to}", err=True)
    for item in translation.done:
        click.echo(item, err=True)
    if translation.fill_in:
        click.echo(
            f"{counted(len(translation.fill_in), 'setting')} to fill in (listed at the top of the config):", err=True
        )
        for item in translation.fill_in:
            click.echo(f"  - {item}", err=True)
