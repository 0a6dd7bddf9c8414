"""gcloud's training commands with only the program name changed, which the registry lists and the CLI loads on demand.

    cloudtrain ml-engine jobs submit training JOB [gcloud flags] [-- ARGS]
    cloudtrain ai-platform jobs submit training JOB [gcloud flags] [-- ARGS]
    cloudtrain ai-platform local train --module-name M [--package-path P] [--distributed …] [-- ARGS]
    cloudtrain ai custom-jobs create --region R --display-name N (--config F | --worker-pool-spec S)
    cloudtrain ai custom-jobs local-run --executor-image-uri URI (--python-module M | --script S) [-- ARGS]

The flags become a config document (:mod:`cloudtrain.backends.vertex.gcloud`) that goes down the one submit path,
so ``--dry-run``, ``-o json``, ``--set`` and ``--strict-legacy`` work here too. As in gcloud the old forms stream
logs only with ``--stream-logs``, ``custom-jobs create`` returns once created, and the local forms are
``submit --local``; ``--configuration NAME`` is ``CLOUDSDK_ACTIVE_CONFIG_NAME=NAME`` for the run."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from cloudtrain.app.submit import SubmitOptions
from cloudtrain.app.submit import submit as submit_job
from cloudtrain.backends.vertex.gcloud import (
    CUSTOM_JOB_FLAGS,
    MLENGINE_FLAGS,
    custom_job_document,
    local_run_document,
    local_train_document,
    mlengine_document,
)
from cloudtrain.cli._group import OUTPUT_OPTION, SET_OPTION, STRICT_OPTION
from cloudtrain.cli.submit import SubmitPrinter
from cloudtrain.config.load import read_document
from cloudtrain.config.yaml12 import LoadedYaml
from cloudtrain.errors import UsageError

Command = TypeVar("Command", bound=Callable[..., Any])

_MLENGINE_VALUE_FLAGS = tuple(MLENGINE_FLAGS)
_CUSTOM_JOB_VALUE_FLAGS = tuple(CUSTOM_JOB_FLAGS)
#: Taken so that they can be refused in one line each (:data:`~cloudtrain.backends.vertex.gcloud.REFUSED_FLAGS`).
_REFUSED_BY_BOTH = ("--kms-key", "--kms-keyring", "--kms-location", "--kms-project", "--format", "--account")
_MLENGINE_REFUSED = (
    *_REFUSED_BY_BOTH,
    "--impersonate-service-account",
    "--parameter-server-accelerator",
    "--parameter-server-image-uri",
    "--use-chief-in-tf-config",
    "--tpu-tf-version",
)
_CUSTOM_JOB_REFUSED = (
    *_REFUSED_BY_BOTH,
    "--impersonate-service-account",
    "--python-package-uris",
    "--persistent-resource-id",
)


def _dest(flag: str) -> str:
    return "g_" + flag.lstrip("-").replace("-", "_")


_HELP = {
    "--job-dir": "Output dir used as given; passed as --job-dir; packages staged under it without --staging-bucket.",
    "--package-path": "The package folder (built into an sdist).",
    "--module-name": "Module run as python -m.",
    "--staging-bucket": "Bucket for the package.",
    "--scale-tier": "BASIC, BASIC_GPU, BASIC_TPU, STANDARD_1, PREMIUM_1 or CUSTOM.",
    "--master-accelerator": "type=…,count=… (retired GPUs map to the nearest).",
    "--worker-accelerator": "type=…,count=… (same as the master's).",
    "--runtime-version": "1.x → the cloud's default TF 2 image; 2.x → the nearest offered.",
    "--labels": "KEY=VALUE,…",
    "--project": "Google Cloud project (else gcloud's configuration, …).",
    "--args": "Comma-separated arguments for the module (or the container).",
    "--command": "Comma-separated command of the container-image-uri= pool (its ENTRYPOINT).",
    "--executor-image-uri": "The prebuilt training image whose TensorFlow runs here.",
    "--script": "A script in --local-package-path, run as `python SCRIPT`.",
    "--local-package-path": "The code folder (default: the working folder).",
    "--requirements": "Comma-separated PyPI requirements installed before the run.",
    "--worker-count": "Workers beside the chief (local train: with --distributed, default 2).",
    "--parameter-server-count": "Parameter servers (local train: with --distributed, default 2).",
}


def _flag_options(flags: tuple[str, ...], refused: tuple[str, ...], func: Command) -> Command:
    for flag in reversed(flags + refused):
        text = "Refused (one line says why)." if flag in refused else _HELP.get(flag, "As in gcloud.")
        func = click.option(flag, _dest(flag), metavar="VALUE", help=text)(func)
    return func


def _common_options(func: Command) -> Command:
    for option in reversed(
        [
            click.option("--config", "g_config", type=click.Path(dir_okay=False), help="gcloud's --config file."),
            click.option("--configuration", "g_configuration", help="gcloud named configuration (for the project)."),
            click.option("--quiet", "-q", "g_quiet", is_flag=True, help="Accepted; cloudtrain never prompts."),
            click.option("--verbosity", "g_verbosity", help="Accepted; use cloudtrain --debug for tracebacks."),
            SET_OPTION,
            click.option("--dry-run", is_flag=True, help="Build the package and print the request; create nothing."),
            STRICT_OPTION,
            OUTPUT_OPTION,
        ]
    ):
        func = option(func)
    return func


def _given(values: dict[str, Any], flags: tuple[str, ...]) -> dict[str, Any]:
    return {flag: values.get(_dest(flag)) for flag in flags}


def _read_config(path: str | None) -> LoadedYaml | None:
    return read_document(path) if path else None


def _submit(
    doc: LoadedYaml,
    overrides: Sequence[str],
    strict: bool,
    configuration: str | None,
    *,
    dry_run: bool,
    detach: bool,
    output: str,
    local: bool = False,
) -> None:
    """The gcloud forms' document through the one submit sequence (:func:`cloudtrain.app.submit.submit`)."""
    environ = {**os.environ, "CLOUDSDK_ACTIVE_CONFIG_NAME": configuration} if configuration else None
    options = SubmitOptions(tuple(overrides), local=local, strict=strict, environ=environ)
    with SubmitPrinter(output) as view:
        submit_job(doc, options, view, dry_run=dry_run, detach=detach)


# --- ml-engine / ai-platform jobs submit training ---------------------------------------


@click.group(name="ml-engine")
def mlengine() -> None:
    """gcloud ml-engine / ai-platform: `jobs submit training JOB …` and `local train` as typed for gcloud."""


@mlengine.group(name="jobs")
def mlengine_jobs() -> None:
    """ML Engine jobs."""


@mlengine_jobs.group(name="submit")
def mlengine_submit() -> None:
    """Submit ML Engine jobs."""


@mlengine_submit.command(name="training", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("job")
@click.argument("user_args", nargs=-1, type=click.UNPROCESSED)
@_common_options
@click.option("--stream-logs", is_flag=True, help="Stream the job's logs and exit with its outcome.")
@click.option("--async", "run_async", is_flag=True, help="Return once the job is created (the default).")
@click.option("--packages", "g_packages", multiple=True, help="Refused: cloudtrain builds from --package-path.")
@click.option("--enable-web-access", "g_enable_web_access", is_flag=True, help="Refused.")
@lambda f: _flag_options(_MLENGINE_VALUE_FLAGS, _MLENGINE_REFUSED, f)
def mlengine_training(
    job: str,
    user_args: tuple[str, ...],
    stream_logs: bool,
    run_async: bool,
    dry_run: bool,
    strict: bool,
    output: str,
    overrides: tuple[str, ...],
    **values: Any,
) -> None:
    """Submit a training job as `gcloud ml-engine jobs submit training` did; user args after `--`."""
    if stream_logs and run_async:
        raise UsageError("--async and --stream-logs exclude each other", hint="drop one (without either: --async)")
    flags = _given(values, _MLENGINE_VALUE_FLAGS + _MLENGINE_REFUSED)
    flags["--packages"] = values.get("g_packages")
    flags["--enable-web-access"] = values.get("g_enable_web_access")
    doc = mlengine_document(job, flags, user_args, _read_config(values.get("g_config")))
    configuration = values.get("g_configuration")
    _submit(doc, overrides, strict, configuration, dry_run=dry_run, detach=not stream_logs, output=output)


@mlengine.group(name="local")
def mlengine_local() -> None:
    """Run an ML Engine package on this machine."""


_LOCAL_TRAIN_FLAGS = ("--module-name", "--package-path", "--job-dir", "--worker-count", "--parameter-server-count")
_LOCAL_TRAIN_REFUSED = ("--evaluator-count",)


@mlengine_local.command(name="train", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("user_args", nargs=-1, type=click.UNPROCESSED)
@_common_options
@click.option("--distributed", is_flag=True, help="Run a chief, workers and parameter servers with TF_CONFIG.")
@click.option("--start-port", "g_start_port", metavar="PORT", help="Accepted; the local run picks free ports.")
@lambda f: _flag_options(_LOCAL_TRAIN_FLAGS, _LOCAL_TRAIN_REFUSED, f)
def mlengine_local_train(
    user_args: tuple[str, ...],
    distributed: bool,
    dry_run: bool,
    strict: bool,
    output: str,
    overrides: tuple[str, ...],
    **values: Any,
) -> None:
    """Run the package here as `gcloud ai-platform local train` does (it is `submit --local`); args after `--`."""
    flags = _given(values, _LOCAL_TRAIN_FLAGS + _LOCAL_TRAIN_REFUSED)
    doc = local_train_document(flags, user_args, _read_config(values.get("g_config")), distributed=distributed)
    configuration = values.get("g_configuration")
    _submit(doc, overrides, strict, configuration, dry_run=dry_run, detach=False, output=output, local=True)


# --- ai custom-jobs create ---------------------------------------------------------------


@click.group(name="ai")
def ai() -> None:
    """gcloud ai: `custom-jobs create` and `custom-jobs local-run` as typed for gcloud."""


@ai.group(name="custom-jobs")
def custom_jobs() -> None:
    """Vertex AI custom jobs."""


@custom_jobs.command(name="create", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--display-name", required=True, help="The job's display name, used as given.")
@click.option(
    "--worker-pool-spec",
    "g_worker_pool_spec",
    multiple=True,
    metavar="KEY=VALUE,…",
    help="machine-type=…,replica-count=…,accelerator-type=…,accelerator-count=…,executor-image-uri=…,"
    "python-module=…,local-package-path=… (or container-image-uri=…); once per pool.",
)
@_common_options
@click.option("--enable-web-access", "g_enable_web_access", is_flag=True, help="Refused.")
@click.option("--enable-dashboard-access", "g_enable_dashboard_access", is_flag=True, help="Refused.")
@lambda f: _flag_options(_CUSTOM_JOB_VALUE_FLAGS, _CUSTOM_JOB_REFUSED, f)
def custom_jobs_create(
    display_name: str, dry_run: bool, strict: bool, output: str, overrides: tuple[str, ...], **values: Any
) -> None:
    """Create a Vertex custom job as `gcloud ai custom-jobs create` does; returns once it is created."""
    flags = _given(values, _CUSTOM_JOB_VALUE_FLAGS + _CUSTOM_JOB_REFUSED)
    flags["--worker-pool-spec"] = values.get("g_worker_pool_spec")
    flags["--enable-web-access"] = values.get("g_enable_web_access")
    flags["--enable-dashboard-access"] = values.get("g_enable_dashboard_access")
    doc = custom_job_document(display_name, flags, _read_config(values.get("g_config")))
    _submit(doc, overrides, strict, values.get("g_configuration"), dry_run=dry_run, detach=True, output=output)


_LOCAL_RUN_FLAGS = ("--executor-image-uri", "--python-module", "--script", "--local-package-path", "--requirements")
_LOCAL_RUN_REFUSED = ("--extra-packages", "--extra-dirs", "--output-image-uri", "--service-account-key-file")


@custom_jobs.command(name="local-run", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("user_args", nargs=-1, type=click.UNPROCESSED)
@_common_options
@click.option("--gpu", "g_gpu", is_flag=True, help="Accepted; a local run uses this machine's GPUs, if any.")
@lambda f: _flag_options(_LOCAL_RUN_FLAGS, _LOCAL_RUN_REFUSED, f)
def custom_jobs_local_run(
    user_args: tuple[str, ...], dry_run: bool, strict: bool, output: str, overrides: tuple[str, ...], **values: Any
) -> None:
    """Run the code here as `gcloud ai custom-jobs local-run` does (it is `submit --local`); args after `--`."""
    flags = _given(values, _LOCAL_RUN_FLAGS + _LOCAL_RUN_REFUSED)
    doc = local_run_document(flags, user_args, _read_config(values.get("g_config")))
    configuration = values.get("g_configuration")
    _submit(doc, overrides, strict, configuration, dry_run=dry_run, detach=False, output=output, local=True)
