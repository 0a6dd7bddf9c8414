"""The Slurm keys checked offline: one line per problem, naming the key and the fix."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath

from cloudtrain import catalog
from cloudtrain.backends import DEFAULT_CONTRACT
from cloudtrain.backends.slurm import script
from cloudtrain.backends.slurm.job_settings import time_limit
from cloudtrain.backends.slurm.section import MIN_GRACE_S, slurm_of
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.data import schemes

#: An ssh destination: host, user@host (each beginning with no ``-``: ssh would read an option), a ``:port``.
_LOGIN = re.compile(r"^(?:[A-Za-z0-9_][A-Za-z0-9._-]*@)?[A-Za-z0-9_][A-Za-z0-9._-]*(?::\d{1,5})?$")
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
#: A feature expression (``a100&ib``, ``[rack1|rack2]*2``, ``!slow``): no blank, quote or ``#`` of sbatch's parser.
_CONSTRAINT = re.compile(r"^[A-Za-z0-9._\-&|,*!\[\]():]+$")
#: sbatch options the backend writes itself and the key that sets each ("" = none): a second value would win.
OWNED = {
    **dict.fromkeys(("--ntasks", "--output", "--error", "--export", "--open-mode", "--chdir", "--parsable"), ""),
    **{f"--{key}": f"slurm.{key}" for key in ("partition", "account", "qos", "constraint", "requeue")},
    **dict.fromkeys(("--gpus", "--gpus-per-node"), "machine.accelerator_count"),
    **dict.fromkeys(("--ntasks-per-node", "--gpus-per-task"), "slurm.tasks_per_node"),
    "--gres": "machine.accelerator_type and machine.accelerator_count",
    "--nodes": "replica_count",
    "--time": "max_runtime",
    "--job-name": "name",
    "--no-requeue": "slurm.requeue",
    "--array": "sweep",
    "--signal": "slurm.grace",
}
_SHORT = {"N": "--nodes", "n": "--ntasks", "G": "--gpus", "t": "--time", "o": "--output", "e": "--error"}
_SHORT |= {"J": "--job-name", "D": "--chdir", "p": "--partition", "a": "--array", "A": "--account", "q": "--qos"}
_SHORT |= {"C": "--constraint"}
#: sbatch's short options that take a value: what follows one in ``-xVALUE`` is its value, not more options.
_SHORT_WITH_VALUE = set("ABCDFGIJLMNSabcdeikmnopqtwx")


def slurm_checks(loaded: LoadedConfig) -> Iterator[tuple[tuple[str, ...], Callable[[], None]]]:
    """(fields the check reads, the check): what :func:`cloudtrain.config.checks.check_config` runs for Slurm."""
    yield ("slurm",), lambda: check_section(loaded)
    yield ("slurm", "max_runtime", "budget", "machine"), lambda: check_time(loaded)
    yield ("image",), lambda: check_image(loaded)
    yield ("data",), lambda: check_data(loaded)
    yield ("sweep",), lambda: check_sweep(loaded)
    yield ("machine",), lambda: check_gpu_type(loaded)


def check_gpu_type(loaded: LoadedConfig) -> None:
    """``machine.accelerator_type``: a gres name (h100), with GPUs to ask for."""
    cfg, err = loaded.config, loaded.error
    gpu = cfg.machine.accelerator_type
    if gpu is None:
        return
    if not _NAME.match(gpu):
        raise err(
            ("machine", "accelerator_type"),
            f"received {gpu!r}; a gres GPU type has letters, digits, ., _ and -",
            "write the type `sinfo -o %G` shows, e.g. h100",
        )
    if cfg.machine.accelerator_count == 0:
        raise err(
            ("machine", "accelerator_type"),
            "a GPU type with machine.accelerator_count: 0 asks for no GPU",
            "set machine.accelerator_count (GPUs per node), or remove accelerator_type",
        )


def check_section(loaded: LoadedConfig) -> None:
    cfg, err = loaded.config, loaded.error
    s = slurm_of(cfg)
    if s is None:
        raise err(
            ("backend",),
            "backend slurm needs a slurm: section (at least slurm.workdir)",
            'add slurm: {login: "", workdir: /shared/cloudtrain}',
        )
    if s.login and not _LOGIN.match(s.login):
        raise err(
            ("slurm", "login"),
            f"received {s.login!r}; an ssh destination is user@host[:port] or a Host from ~/.ssh/config",
            'write e.g. ubuntu@10.0.0.5, or "" to run sbatch on this machine',
        )
    if not PurePosixPath(s.workdir).is_absolute():
        raise err(
            ("slurm", "workdir"),
            f"received {s.workdir!r}; the workdir must be an absolute path every node sees",
            "write e.g. /fsx/cloudtrain (a shared filesystem)",
        )
    if "\\" in s.workdir:  # Slurm's file name patterns (--output) read it as "no %j here"
        raise err(("slurm", "workdir"), f"received {s.workdir!r}; Slurm's file names take no backslash", "rename it")
    if s.tasks_per_node == "gpus" and cfg.machine.accelerator_count == 0:
        raise err(
            ("slurm", "tasks_per_node"),
            "one task per GPU on CPU nodes (machine.accelerator_count: 0)",
            "set machine.accelerator_count, or remove tasks_per_node",
        )
    for key in ("partition", "account", "qos"):
        value = getattr(s, key)
        if value and not _NAME.match(value):
            raise err(
                ("slurm", key), f"received {value!r}; Slurm names have letters, digits, ., _ and -", f"fix slurm.{key}"
            )
    if s.constraint and not _CONSTRAINT.match(s.constraint):
        raise err(
            ("slurm", "constraint"),
            f"received {s.constraint!r}; a constraint is features joined by & | , * ! [ ] ( )",
            "write e.g. a100 or a100&ib",
        )
    for i, line in enumerate(s.sbatch):
        problem = sbatch_line_problem(line)
        if problem:
            raise err(("slurm", "sbatch", i), *problem)


def sbatch_line_problem(line: str) -> tuple[str, str] | None:
    """Why an ``slurm.sbatch`` line cannot be written as it is, read as sbatch reads an ``#SBATCH`` line
    (its arguments, each option in every spelling sbatch takes: ``-t1``, ``-vN3``, ``--outp=``), or None."""
    try:
        args = script.sbatch_arguments(line)
    except ValueError as exc:  # sbatch's own error: "Unmatched `"`"
        return f"received {line!r}: {exc}, which sbatch refuses", "close the quote"
    if not args or not args[0].startswith("-"):
        return f"received {line!r}; each line is sbatch options", 'write e.g. "--mem=0"'
    value_next: bool | None = False
    for arg in args:
        if value_next and not arg.startswith("-"):  # the value of the option before it
            value_next = False
            continue
        owned, value_next = _owned(arg)
        if value_next is None:
            return f"received {line!r}: {arg!r} is no sbatch option", "write options only, e.g. --mem=0"
        if owned:
            hint = f"set {OWNED[owned]} instead" if OWNED[owned] else "remove it"
            return f"{arg} ({owned}) is written by cloudtrain from the config", hint
    return None


def _owned(arg: str) -> tuple[str | None, bool | None]:
    """The owned option ``arg`` spells, if any, and whether the next argument is its value (None: not an option)."""
    if arg.startswith("--") and len(arg) > 2:
        name, eq, _ = arg.partition("=")
        owned = [o for o in OWNED if o.startswith(name)]  # sbatch takes any unambiguous abbreviation
        return (name if name in OWNED else owned[0] if owned else None), not eq and not owned
    if not arg.startswith("-") or len(arg) < 2 or arg == "--":
        return None, None
    for at, letter in enumerate(arg[1:], 1):
        if letter in _SHORT:
            return _SHORT[letter], False
        if letter in _SHORT_WITH_VALUE:
            return None, at == len(arg) - 1
    return None, False


def check_time(loaded: LoadedConfig) -> None:
    """The time limit leaves room for the warning; a GPU-hours cap buys at least that."""
    cfg, err = loaded.config, loaded.error
    section = slurm_of(cfg)
    grace = section.grace if section else 120
    gpu_hours = cfg.budget.max_gpu_hours if cfg.budget else None
    if gpu_hours is not None and cfg.machine.accelerator_count == 0:
        raise err(
            ("budget", "max_gpu_hours"),
            "a CPU job (machine.accelerator_count: 0) uses no GPU-hours",
            "remove budget.max_gpu_hours, or set max_runtime",
        )
    seconds = time_limit(cfg.max_runtime, gpu_hours, cfg.machine.accelerator_count * cfg.replica_count)
    if seconds <= grace + 60:
        field = ("budget", "max_gpu_hours") if seconds < cfg.max_runtime else ("max_runtime",)
        raise err(
            field,
            f"the time limit would be {seconds} s, not more than the warning's {grace} s plus a minute",
            f"allow more than {grace + 60} s (or lower slurm.grace, at least {MIN_GRACE_S})",
        )


def check_image(loaded: LoadedConfig) -> None:
    cfg, err = loaded.config, loaded.error
    if cfg.image.uri:
        raise err(
            ("image", "uri"),
            "a Slurm job runs in a Python environment built on the cluster, not an image",
            "remove image.uri; set image.tensorflow for the TensorFlow version",
        )
    if cfg.image.tensorflow:
        try:  # the versions --local offers
            catalog.training_image(DEFAULT_CONTRACT, "us-central1", cfg.image.tensorflow, gpu=False)
        except catalog.CatalogError as exc:
            raise err(("image", "tensorflow"), str(exc), "choose a TensorFlow version the clouds ship") from None


def check_data(loaded: LoadedConfig) -> None:
    """A bucket (downloaded at submit), a folder here (copied into the workdir unless on its filesystem;
    relative paths start at the config's folder), or, through a login node, an absolute path on the cluster."""
    cfg, err = loaded.config, loaded.error
    for name, channel in cfg.data.items():
        source = channel if isinstance(channel, str) else channel.source
        at = ("data", name) if isinstance(channel, str) else ("data", name, "source")
        if not re.match(r"^[A-Za-z0-9_]+$", name):
            raise err(
                ("data", name),
                f"channel name {name!r} has characters other than A-Z, a-z, 0-9 and _",
                f"rename it; the code finds it at {schemes.channel_env('NAME')}",
            )
        if schemes.source_kind(source) != "local":
            problem = schemes.scheme_problem("slurm", source)
            if problem:
                raise err(at, f"received {source!r}; {problem[0]}", problem[1])
            continue
        login = section.login if (section := slurm_of(cfg)) else ""
        on_cluster = login and PurePosixPath(source).is_absolute()
        if not on_cluster and not (loaded.base_dir / source).is_dir():
            raise err(
                at,
                f"local folder {source!r} does not exist (relative paths start at the config's folder)",
                "point it at a folder, or write an absolute path on the cluster" if login else "point it at a folder",
            )


def check_sweep(loaded: LoadedConfig) -> None:
    """A trial on Slurm is an array task that reports its result when it ends: no pruning while it runs.
    (``secrets:`` are taken: the array's tasks read the sweep's one 0600 file, :mod:`.sweep_array`.)"""
    sweep = loaded.config.sweep
    if sweep is not None and sweep.early_stopping:
        raise loaded.error(
            ("sweep", "early_stopping"),
            "a Slurm sweep's trials report their metric when they end, so none is stopped early",
            "remove sweep.early_stopping (or run the sweep --local)",
        )
