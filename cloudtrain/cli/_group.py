"""The ``cloudtrain`` click group and the options several commands share."""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from cloudtrain import __version__, backends
from cloudtrain.errors import UsageError
from cloudtrain.history import expand

Command = TypeVar("Command", bound=Callable[..., Any])

CONFIG_OPTION = click.option("--config", "-c", "config_path", type=click.Path(dir_okay=False), help="Job config YAML.")
SET_OPTION = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a config value.")
STRICT_OPTION = click.option(
    "--strict-legacy",
    "strict",
    is_flag=True,
    help="Refuse instead of mapping: every 'mapped:' line (retired GPUs, versions, another cloud) is an error.",
)


if TYPE_CHECKING:
    _DurationType = click.ParamType[float]
    _ChoiceType = click.Choice[str]
    _TextType = click.ParamType[str]
else:  # older click (the 8.1 the dependencies allow) takes no type parameters at run time
    _DurationType = _TextType = click.ParamType
    _ChoiceType = click.Choice


class Duration(_DurationType):
    """``90``, ``90s``, ``2m``, ``1m30s``, ``1h``: a number of seconds."""

    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, (int, float)):
            return float(value)
        text = str(value).strip().lower()
        parts = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?", text)
        if not text or not parts:
            self.fail(f"{value!r} is not a duration; use e.g. 90s, 2m, 1m30s or 1h", param, ctx)
        hours, minutes, seconds = (float(p) if p else 0.0 for p in parts.groups())
        return hours * 3600 + minutes * 60 + seconds


class JobId(_TextType):
    """A job as people name it: id, ``last``, a unique part of one in history, a run folder, a full name."""

    name = "JOB"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        return expand(str(value))


JOB_ID = JobId()
DRAIN_OPTION = click.option(
    "--drain",
    type=Duration(),
    default=None,
    metavar="DURATION",
    help="After the job ends, keep reading until this long passes with no new line (default 1m; Vertex).",
)
OUTPUT_OPTION = click.option(
    "--output",
    "-o",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: one JSON document on stdout (logs: one object per line), everything for people on stderr.",
)


class BackendChoice(_ChoiceType):
    """The registry's backends, read when the option is used (a backend may be registered after import)."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:  # click declares a plain attribute; this reads the registry
        return backends.names()

    @choices.setter
    def choices(self, value: Any) -> None:
        pass


JOB_OPTIONS = [
    click.option("--backend", type=BackendChoice(), help="Default: from history."),
    click.option("--region", help="Default: from history or --config."),
    click.option("--project", help="Vertex project. Default: from history or --config."),
    CONFIG_OPTION,
]


def job_options(func: Command) -> Command:
    """``--backend``, ``--region``, ``--project``, ``--config``: where a job is, when history does not say."""
    for option in reversed(JOB_OPTIONS):
        func = option(func)
    return func


def config_argument(func: Command) -> Command:
    """``CONFIG`` as a positional argument or as ``--config/-c``, the same on every command that reads one."""
    func = click.argument("config_arg", metavar="[CONFIG]", required=False, type=click.Path(dir_okay=False))(func)
    return CONFIG_OPTION(func)


def pick_config(positional: str | None, option: str | None) -> str | None:
    if positional and option and positional != option:
        raise UsageError(f"two configs given: {positional} and --config {option}", hint="pass one")
    return positional or option


def debug_enabled() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().obj and ctx.find_root().obj.get("debug"))


def debug_option() -> click.Option:
    """``--debug`` on a command: the same as ``cloudtrain --debug COMMAND`` (tracebacks, debug lines)."""
    return click.Option(
        ["--debug"],
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=lambda _ctx, _param, value: _show_backend_notes(True) if value else None,
        help="Show tracebacks and debug lines.",
    )


#: Each top-level command's module (imported when it runs, so each pays only its own imports) and its ``--help``
#: text; tests/cli/test_lazy_commands.py keeps it equal to the modules. Format commands are the backends'.
COMMANDS: dict[str, tuple[str, str]] = {
    "cache": (
        "cloudtrain.cli.cache",
        "Show the cache folder's size: built packages, local environments, data, history.",
    ),
    "cancel": (
        "cloudtrain.cli.jobs",
        "Cancel (stop) a job.",
    ),
    "list": (
        "cloudtrain.cli.listing",
        "Recent jobs from this machine's history, every backend; with --backend and --region (or "
        "--config), the cloud's own list for that region (jobs submitted from anywhere).",
    ),
    "logs": (
        "cloudtrain.cli.jobs",
        "Print a job's logs; with --follow, stream until it ends and exit with its outcome.",
    ),
    "machines": (
        "cloudtrain.cli.offline",
        "The machine catalog: every machine type with its GPUs, allowed counts and on-demand prices.",
    ),
    "outputs": (
        "cloudtrain.cli.watch",
        "List what a job produced (model, checkpoints, TensorBoard logs, replicas' logs, anything under its"
        " output folder) with sizes; --download DIR fetches them (resumes, verifies sizes and checksums).",
    ),
    "package": (
        "cloudtrain.cli.offline",
        "Build the deterministic sdist of a package directory and print its path and hash.",
    ),
    "report": (
        "cloudtrain.cli.report",
        "Write a run report: start-up timeline, loss and metric per epoch, examples/s, cost; several jobs"
        " side by side (e.g. 1 vs 4 GPUs: speed-up and cost per epoch); a sweep's trials.",
    ),
    "schema": (
        "cloudtrain.cli.offline",
        "Print the config's JSON Schema (for editors: yaml-language-server).",
    ),
    "status": (
        "cloudtrain.cli.jobs",
        "Show a job's state.",
    ),
    "submit": (
        "cloudtrain.cli.submit",
        "Build, upload and run a job; stream its logs; exit with the job's outcome.",
    ),
    "sweep": (
        "cloudtrain.cli.sweep",
        "Hyperparameter sweeps: their trials and results.",
    ),
    "tensorboard": (
        "cloudtrain.cli.watch",
        "Serve TensorBoard here over the runs' event files, each run named by its job: a local run, a"
        " Slurm run folder, gs:// and s3:// (copied into the cache, only new bytes, while the job runs).",
    ),
    "validate": (
        "cloudtrain.cli.offline",
        "Check a config offline (no build, no upload). CONFIG may be given as an argument or with --config.",
    ),
}


class Group(click.Group):
    """A click group whose every command, in nested groups too, also takes ``--debug``; the top-level
    group loads a command's module only when that command is asked for (:data:`COMMANDS`)."""

    group_class = type  # subgroups made with @cli.group() are of this class too
    lazy_commands: dict[str, tuple[str, str]] = {}  # only the top-level group has any

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        with_debug(cmd)
        super().add_command(cmd, name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(self.lazy_commands) | set(self._contributed()))

    def _contributed(self) -> dict[str, tuple[str, str]]:
        """The backends' commands (only the top-level group has any)."""
        return backends.commands() if self.lazy_commands else {}

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            importlib.import_module(self.lazy_commands[cmd_name][0])  # its decorators add it to this group
        elif cmd_name not in self.commands and (contributed := self._contributed().get(cmd_name)):
            module, _, attr = contributed[0].partition(":")
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help_text(ctx, formatter)
        if ctx.parent is None:  # the top group: every registered backend, read when the help is asked for
            backends.check_plugins()
            line = ", ".join(
                f"{name} ({title})" if title != name else name for name, title in backends.titles().items()
            )
            with formatter.indentation():
                formatter.write_paragraph()
                formatter.write_text(f"Backends (backend: in the config, or --set backend=NAME): {line}.")

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands' lines as click writes them, from :data:`COMMANDS` for the ones not loaded."""
        rows = []
        for name in self.list_commands(ctx):
            if (cmd := self.commands.get(name)) is None:  # not loaded: its line from COMMANDS or its backend
                cmd = click.Command(name, help=(self.lazy_commands.get(name) or self._contributed()[name])[1])
            if not cmd.hidden:
                rows.append((name, cmd))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])


def with_debug(cmd: click.Command) -> click.Command:
    """Give ``cmd`` and, for a group made elsewhere, every command below it ``--debug``."""
    if not any(p.name == "debug" for p in cmd.params):
        cmd.params.append(debug_option())
    for sub in getattr(cmd, "commands", {}).values():
        with_debug(sub)
    return cmd


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.version_option(__version__, prog_name="cloudtrain")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Submit a TensorFlow training package to a cloud, a Slurm or Kubernetes cluster, or run it here.

    \b
      cloudtrain submit --config job_configs/gpu4.yaml --dry-run   # the exact request
      cloudtrain submit --config job_configs/gpu4.yaml --local     # run it on this machine
      cloudtrain submit --config job_configs/gpu4.yaml             # run it in the cloud"""
    ctx.obj = {"debug": debug}
    _show_backend_notes(debug)


cli.lazy_commands = COMMANDS


def _show_backend_notes(debug: bool) -> None:
    """Backends report steps ("uploaded s3://…") on the ``cloudtrain.*`` loggers: show them on stderr."""

    class ToStderr(logging.Handler):  # looks sys.stderr up per line, so it follows redirection
        def emit(self, record: logging.LogRecord) -> None:
            click.echo(record.getMessage(), err=True)

    logger = logging.getLogger("cloudtrain")
    if not any(type(h).__name__ == "ToStderr" for h in logger.handlers):
        logger.addHandler(ToStderr())
    logger.setLevel(logging.DEBUG if debug else logging.INFO)
