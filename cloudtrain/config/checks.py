"""Checks that need more than the schema: the cloud catalog and the file system.

Everything a cloud would reject after an upload is refused here, offline, with the line
of the offending key and the nearest valid alternatives.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from pathlib import Path

from cloudtrain import catalog, environment_vars
from cloudtrain.backend_rules import Capability
from cloudtrain.config.loaded import LoadedConfig, check_control_characters
from cloudtrain.config.problems import Problems
from cloudtrain.config.rules import rules
from cloudtrain.config.schema import DataChannel
from cloudtrain.config.script_mode import check_script_mode
from cloudtrain.config.secret_checks import check_secrets
from cloudtrain.data import schemes
from cloudtrain.errors import ConfigError, ConfigErrors, PackagingError
from cloudtrain.packaging.tree import check_module, check_package_dir
from cloudtrain.text import FILL_IN
from cloudtrain.text.numbers import money

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CHANNEL_NAME = re.compile(r"^[A-Za-z0-9_]+$")
_CHANNEL_NAME_MAX = 64  # SageMaker's limit, kept on every backend: the same data: runs anywhere


_EXPERIMENT = re.compile(r"^[a-z0-9](-*[a-z0-9]){0,62}$")


def check_config(loaded: LoadedConfig, problems: Problems | None = None) -> None:
    """Every check whose fields are valid, each error collected (:class:`Problems`); raises them at the end.

    ``problems`` may already hold the schema's errors: checks reading those fields are skipped."""
    problems = problems if problems is not None else Problems()
    cfg = loaded.config
    cloud = cfg.cloud
    backend = rules(cfg.backend)
    contract = rules(cloud)  # whose contract the job follows (the backend, or local's target)
    err = loaded.error
    run = problems.run
    run((), lambda: check_control_characters(loaded))

    def fail(path: tuple[str, ...], message: str, hint: str | None = None) -> Callable[[], None]:
        def check() -> None:
            raise err(path, message, hint)

        return check

    follows_target = Capability.FOLLOWS_TARGET in backend.capabilities
    if cfg.target and not follows_target:
        run(
            ("target",),
            fail(("target",), f"target is only for backend local (backend is {cfg.backend})", "remove target"),
        )

    if cfg.machine.accelerator_type and not follows_target and "accelerator_type" not in backend.machine_keys:
        run(
            ("machine", "accelerator_type"),
            fail(
                ("machine", "accelerator_type"),
                f"machine.accelerator_type names a cluster's GPU type (--gres); a {cfg.backend} job does not take it",
                "remove it; the GPU is machine.accelerator (or the machine type)",
            ),
        )

    def region() -> None:
        try:
            catalog.check_region(cloud, cfg.region)
        except catalog.CatalogError as exc:
            raise err(("region",), str(exc), _alternatives(exc)) from None

    def machine() -> None:
        try:
            catalog.resolve_machine(cloud, cfg.machine.type, cfg.machine.accelerator, cfg.machine.accelerator_count)
        except catalog.CatalogError as exc:
            field = {"machine_type": "type"}.get(exc.field or "", exc.field or "type")
            raise err(("machine", field), str(exc), _alternatives(exc)) from None

    def machine_type() -> None:
        try:
            catalog.resolve_machine(cloud, cfg.machine.type, None, None)
        except catalog.CatalogError as exc:
            if exc.field in (None, "machine_type"):  # about the type itself, not its accelerators
                raise err(("machine", "type"), str(exc), _alternatives(exc)) from None

    def image() -> None:
        if cfg.image.tensorflow is None:
            return
        try:
            catalog.training_image(
                cloud, cfg.region, cfg.image.tensorflow, gpu=False, py_version=catalog.python_tag(cfg.image.python)
            )
        except catalog.CatalogError as exc:
            field = "python" if cfg.image.python and "Python" in str(exc) else "tensorflow"
            raise err(("image", field), str(exc), _alternatives(exc)) from None

    def offered() -> None:
        # after region and machine passed: does this region have the machine's accelerators?
        try:
            m = catalog.resolve_machine(cloud, cfg.machine.type, cfg.machine.accelerator, cfg.machine.accelerator_count)
            catalog.check_offered(m, cfg.region)
        except catalog.CatalogError as exc:
            here = catalog.offered_in(cloud, cfg.region)
            other = f"a machine with {' / '.join(here)}" if here else "another machine"
            raise err(("region",), str(exc), f"set region: {exc.alternatives[0]}, or {other}") from None

    own_checks = backend.field_checks(loaded)  # a cluster: no catalog of regions and machines
    cluster = bool(own_checks)
    if own_checks:
        for fields, check in own_checks:
            run(fields, check)
    else:
        run(("target", "backend", "region"), region)
        run(("target", "backend", "machine"), machine)
        if problems.failed("machine") and not problems.failed("machine.type"):
            # another key of machine: failed (an unknown key, a bad count): the type alone is still
            # checked, as it depends on no other key of the section
            run(("target", "backend", "machine.type"), machine_type)
        if not follows_target:  # a local run needs no region's GPUs
            run(("target", "backend", "region", "machine"), offered)

    def tpu_job() -> None:
        try:
            m = catalog.resolve_machine(cloud, cfg.machine.type, cfg.machine.accelerator, cfg.machine.accelerator_count)
            if m.tpu is None:
                return
            catalog.check_tpu_job(
                m,
                topology=cfg.machine.tpu_topology,
                region=cfg.region,
                replica_count=cfg.replica_count,
                tensorflow=cfg.image.tensorflow,
                own_image=bool(cfg.image.uri or cfg.container),
            )
        except catalog.CatalogError as exc:
            path = {"tpu_topology": ("machine", "tpu_topology"), "tensorflow": ("image", "tensorflow")}
            raise err(path.get(exc.field or "", (exc.field or "machine",)), str(exc), _alternatives(exc)) from None

    if Capability.TPUS in backend.capabilities and cfg.machine.type in catalog.tpu_machine_types():
        run(("target", "backend", "machine", "region", "image", "replica_count"), tpu_job)
    elif cfg.image.uri is None and cfg.image.tensorflow is not None and not cluster:
        run(("target", "backend", "region", "image"), image)
    for fields, check in backend.settings_checks(loaded):
        run(fields, check)
    if Capability.STAGING in backend.capabilities:
        for field, check in _staging_checks(loaded):
            run(("backend", field), check)
    longest = None if cluster else contract.max_runtime_seconds
    if longest is not None and cfg.max_runtime > longest:
        run(
            ("max_runtime",),
            fail(
                ("max_runtime",),
                f"received {cfg.max_runtime} s; {cloud} allows at most {longest} s",
                f"set max_runtime: {longest // 86400}d or less",
            ),
        )
    if cfg.spot.max_wait is not None:
        if Capability.SPOT_MAX_WAIT not in contract.capabilities:
            message, hint = contract.capabilities.refusal(Capability.SPOT_MAX_WAIT).format(title=contract.title)
            run(("spot",), fail(("spot", "max_wait"), message, hint))
        elif cfg.spot.max_wait < cfg.max_runtime:
            run(
                ("spot", "max_runtime"),
                fail(
                    ("spot", "max_wait"),
                    f"received {cfg.spot.max_wait} s, shorter than max_runtime ({cfg.max_runtime} s)",
                    "make max_wait at least max_runtime",
                ),
            )
    for key in cfg.env:
        if not _ENV_NAME.match(key):
            run(
                (f"env.{key}",),
                fail(("env", key), f"{key!r} is not a valid environment variable name", "use A-Z, 0-9 and _"),
            )
        elif environment_vars.reserved(key):
            said = f"{key!r} is set in the job by {environment_vars.reserved(key)}: a value of yours would replace it"
            run((f"env.{key}",), fail(("env", key), said, "rename the variable"))
    for key in cfg.labels:
        if key.lower().startswith(RESERVED_LABEL_PREFIX):
            run(
                (f"labels.{key}",),
                fail(
                    ("labels", key),
                    f"{key!r} is one of cloudtrain's own labels (keys starting with {RESERVED_LABEL_PREFIX!r}): "
                    "cloudtrain sets it to find the job again, and a value of yours would replace it",
                    "rename the label",
                ),
            )
    for fields, check in contract.contract_checks(loaded):
        run(fields, check)
    followed = follows_target and cfg.target  # --local of a cloud's config: the event files are here
    tensorboard = Capability.MANAGED_TENSORBOARD
    if cfg.tensorboard not in (None, False) and tensorboard not in backend.capabilities and not followed:
        where = "this machine" if Capability.RUNS_HERE in backend.capabilities else backend.title or cfg.backend
        message, hint = backend.capabilities.refusal(tensorboard).format(title=where)
        run(("backend", "tensorboard"), fail(("tensorboard",), message, hint))
    if cfg.experiment is not None and not _EXPERIMENT.match(cfg.experiment):
        run(
            ("experiment",),
            fail(
                ("experiment",),
                f"received {cfg.experiment!r}; an experiment name is lowercase letters, digits and -, "
                "at most 63, not ending in - (a SageMaker experiment and a Vertex label value both)",
                f"use experiment: {re.sub(r'[^a-z0-9-]+', '-', cfg.experiment.lower()).strip('-')[:63] or 'baseline'}",
            ),
        )
    if not cluster:  # shared paths on the cluster are not folders here: its own checks read data:
        run(("backend", "data"), lambda: _check_data(loaded))
    run(("backend", "secrets", "env", "container", "project", "region"), lambda: check_secrets(loaded))
    if cfg.container is not None:
        run(("backend", "container", "package", "image", "distribution", "sweep"), lambda: _check_container(loaded))
    else:
        run(("backend", "package", "hyperparameters", "distribution", "image"), lambda: check_script_mode(loaded))
        if cfg.package.script is None:
            run(("package",), lambda: _check_package(loaded))
    if not cluster:
        run(("backend", "machine", "replica_count", "flex_start", "spot", "budget"), lambda: _check_scheduling(loaded))
    if cfg.sweep is not None:
        run(("backend", "sweep", "hyperparameters"), lambda: _check_sweep(loaded))
    problems.raise_any()


#: Label keys cloudtrain sets on the jobs it submits (cloudtrain-submit-id finds a job after a lost create).
RESERVED_LABEL_PREFIX = "cloudtrain-"


def _check_container(loaded: LoadedConfig) -> None:
    """``container:`` runs on Vertex AI (any registry) and SageMaker (ECR only); not here, not as a sweep."""
    cfg, err = loaded.config, loaded.error
    if cfg.container is None:
        return
    image = cfg.container.image_uri
    for key in ("package", "image", "distribution"):
        if key in cfg.model_fields_set:
            raise err(
                (key,),
                f"{key} is for a Python package job; container runs your own image as it is",
                f"remove {key} (or container, to run a package)",
            )
    backend = rules(cfg.backend)
    if Capability.CONTAINERS not in backend.capabilities:
        message, hint = backend.capabilities.refusal(Capability.CONTAINERS).format(title=backend.title, image=image)
        raise err(("container",), message, hint)
    if cfg.sweep is not None:
        raise err(
            ("container",),
            "a sweep runs a package, not your own container",
            "remove sweep, or run the package (package.path, package.module) instead of container",
        )
    backend.check_container(loaded)


def _check_sweep(loaded: LoadedConfig) -> None:
    cfg, err = loaded.config, loaded.error
    sweep = cfg.sweep
    if sweep is None:
        return
    from cloudtrain.sweeps.params import SweepParamError, grid_size, resolve  # a sweep's: not on a job's dry run

    try:
        params = resolve(sweep.params, sweep.algorithm)
    except SweepParamError as exc:
        raise err(exc.path, exc.message, exc.hint) from None
    if sweep.parallel_trials > sweep.max_trials:
        raise err(
            ("sweep", "parallel_trials"),
            f"received {sweep.parallel_trials}, more than max_trials ({sweep.max_trials})",
            f"set parallel_trials: {sweep.max_trials} or less",
        )
    for param in params:
        if param.name in cfg.hyperparameters:
            raise err(
                ("hyperparameters", param.name),
                f"{param.name!r} is both fixed here and tuned by the sweep",
                "remove it from hyperparameters",
            )
    if sweep.algorithm == "grid" and grid_size(params) > 10_000:
        raise err(("sweep", "params"), f"the grid has {grid_size(params):,} points", "narrow the values")
    rules(cfg.cloud).check_sweep(loaded, params)


def _check_data(loaded: LoadedConfig) -> None:
    """Every problem of ``data:`` at once, one line each: names, schemes, local folders."""
    problems = [p for name, channel in loaded.config.data.items() for p in channel_problems(loaded, name, channel)]
    contract = rules(loaded.config.cloud)
    most = contract.max_channels
    if most is not None and len(loaded.config.data) > most:
        problems.append(
            loaded.error(
                ("data",),
                f"{len(loaded.config.data)} channels; {contract.title} allows at most {most}",
                "put several folders under one prefix",
            )
        )
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise ConfigErrors(problems)


def channel_problems(loaded: LoadedConfig, name: str, channel: str | DataChannel) -> list[ConfigError]:
    cfg, err = loaded.config, loaded.error
    mapping = not isinstance(channel, str)
    source = channel if isinstance(channel, str) else channel.source
    at = ("data", name, "source") if mapping else ("data", name)
    out = []
    if not _CHANNEL_NAME.match(name):
        out.append(
            err(
                ("data", name),
                f"channel name {name!r} has characters other than A-Z, a-z, 0-9 and _; "
                f"the code finds a channel at {schemes.CHANNEL_ENV_PREFIX}<NAME>, an environment variable",
                f"rename it, e.g. {re.sub(r'[^A-Za-z0-9_]', '_', name) or 'train'}",
            )
        )
    elif len(name) > _CHANNEL_NAME_MAX:
        out.append(
            err(("data", name), f"channel name has {len(name)} characters; at most {_CHANNEL_NAME_MAX}", "shorten it")
        )
    twins = [other for other in cfg.data if other != name and other.upper() == name.upper()]
    if twins and list(cfg.data).index(name) > list(cfg.data).index(twins[0]):
        out.append(
            err(
                ("data", name),
                f"channels {twins[0]!r} and {name!r} differ only in case; both would be {schemes.channel_env(name)}",
                "rename one of them",
            )
        )
    problem = schemes.scheme_problem(cfg.cloud, source)
    if problem:
        out.append(err(at, f"received {source!r}; {problem[0]}", problem[1]))
    elif schemes.source_kind(source) == "local":
        folder = loaded.base_dir / source
        refused = local_folder_problem(source, loaded.base_dir)
        if refused:
            out.append(err(at, f"received {source!r}; {refused[0]}", refused[1]))
        elif not folder.is_dir():
            what = "is a file, not a folder" if folder.exists() else "does not exist"
            out.append(
                err(
                    at,
                    f"local folder {source!r} {what} (relative paths start at the config's folder)",
                    "point it at a folder holding the data, or at gs:// / s3://",
                )
            )
    if mapping:
        for field in ("input_mode", "distribution"):
            if getattr(channel, field) is not None and field not in rules(cfg.cloud).channel_options:
                out.append(
                    err(
                        ("data", name, field),
                        f"{field} is a SageMaker setting; "
                        f"{rules(cfg.cloud).title} reads gs:// through Cloud Storage FUSE",
                        f"remove {field}",
                    )
                )
    return out


#: Folders of the system, never data: reading them uploads the machine's secrets or never ends.
SYSTEM_FOLDERS = tuple(Path(p) for p in ("/proc", "/sys", "/dev", "/etc"))


def local_folder_problem(source: str, base: Path) -> tuple[str, str] | None:
    """Why a local data folder is refused before anything is read (the problem, the fix); None if it is not.

    A relative path may not climb above the config's folder (judged on the text, so a data folder
    that is itself a link to a disk elsewhere is fine); no path may name the root or a system folder."""
    if not source.strip():
        return (
            "an empty path would be the config's own folder, uploading everything beside the config",
            "name the data folder, e.g. ./data",
        )
    if not Path(source).is_absolute() and os.path.normpath(source).split(os.sep)[0] == "..":
        return (
            "relative data paths start at the config's folder and may not climb above it",
            "move the data beside the config, or write the folder's absolute path",
        )
    written = Path(os.path.normpath(base / source))  # /proc/1/root/etc: judged as written before any link is read
    try:
        resolved = (base / source).resolve()
    except OSError as exc:  # a link cloudtrain may not read (/proc/1/root), a loop
        resolved = None
        unreadable = f"cannot be read ({exc.strerror or exc})"
    for path in (written, resolved):
        if path is not None and (path == Path(path.anchor) or any(path.is_relative_to(d) for d in SYSTEM_FOLDERS)):
            return f"{path} is a system folder, not data", "point it at the folder holding the data"
    if resolved is None:
        return unreadable, "point it at a folder you can read"
    return None


def _staging_checks(loaded: LoadedConfig) -> list[tuple[str, Callable[[], None]]]:
    """(field, check) for where a backend that stages in a bucket reads and writes, each checked on its own."""
    cfg, err = loaded.config, loaded.error
    scheme = f"{rules(cfg.backend).storage_schemes[0]}://"

    def staging() -> None:
        # A container job stages nothing of its own: its output dir is enough, unless local data is uploaded.
        container_only = (
            cfg.container is not None
            and cfg.output_dir
            and not any(
                schemes.source_kind(e if isinstance(e, str) else e.source) == "local" for e in cfg.data.values()
            )
        )
        if not cfg.staging_bucket and not cfg.job_dir and not container_only:
            raise err(
                ("staging_bucket",),
                f"{cfg.backend} needs a staging bucket",
                f"add staging_bucket: {scheme}my-bucket (or job_dir: {scheme}my-bucket/job, as gcloud's --job-dir)",
            )

    def location(field: str) -> Callable[[], None]:
        def check() -> None:
            value = getattr(cfg, field)
            if value and not (value.startswith(scheme) and len(value) > len(scheme)):
                raise err(
                    (field,),
                    f"received {value!r}; {cfg.backend} needs a {scheme}… location",
                    f"write {scheme}{value.split('://')[-1].strip('/') or 'my-bucket'}",
                )
            if value and _placeholder(value):
                raise err(
                    (field,),
                    f"received {value!r}, the placeholder `cloudtrain init` wrote",
                    f"write your bucket: {scheme}my-bucket",
                )
            problem = schemes.scheme_problem(cfg.cloud, value) if value else None
            if problem:
                raise err((field,), f"received {value!r}; {problem[0]}", problem[1])

        return check

    return [
        ("staging_bucket", staging),
        *((field, location(field)) for field in ("staging_bucket", "output_dir", "job_dir")),
    ]


def _placeholder(value: str) -> bool:
    """A value ``cloudtrain init`` wrote for the user to fill in (``…:role/FILL-IN``, ``s3://FILL-IN-BUCKET``)."""
    return FILL_IN in value


def _check_package(loaded: LoadedConfig) -> None:
    package = loaded.config.package
    directory = loaded.base_dir / package.path
    try:
        check_package_dir(directory)
    except PackagingError as exc:
        raise loaded.error(("package", "path"), exc.message, exc.hint) from None
    try:
        check_module(directory, package.module)
    except PackagingError as exc:
        raise loaded.error(("package", "module"), exc.message, exc.hint) from None


def _alternatives(exc: catalog.CatalogError) -> str | None:
    return f"nearest valid: {', '.join(exc.alternatives[:4])}" if exc.alternatives else None


#: The shortest run a budget may buy: less is a config mistake, not a plan.
MIN_BUDGET_SECONDS = 600


def least_budget(per_hour: float) -> float:
    """The least whole-cent budget that buys :data:`MIN_BUDGET_SECONDS`: rounded up, so the figure a
    refusal names is accepted (rounded to nearest, $2.484/h asked for $0.41, which buys 594 s)."""
    return math.ceil(round(per_hour * MIN_BUDGET_SECONDS / 3600 * 100, 6)) / 100


def _check_scheduling(loaded: LoadedConfig) -> None:
    """Spot or flex-start (never both); flex-start on Vertex AI only; a budget that buys a real run."""
    cfg, err = loaded.config, loaded.error
    if cfg.flex_start.enabled and cfg.spot.enabled:
        raise err(
            ("flex_start", "enabled"),
            "spot and flex_start are two values of one Vertex AI setting (Scheduling.strategy): choose one",
            "remove spot.enabled or flex_start.enabled",
        )
    contract = rules(cfg.cloud)
    if cfg.flex_start.enabled and Capability.FLEX_START not in contract.capabilities:
        message, hint = contract.capabilities.refusal(Capability.FLEX_START).format(title=contract.title)
        raise err(("flex_start", "enabled"), message, hint)
    if cfg.flex_start.max_wait is not None and not cfg.flex_start.enabled:
        raise err(
            ("flex_start", "max_wait"), "max_wait applies with flex_start.enabled: true", "enable it or remove it"
        )
    budget = cfg.budget
    if budget is not None and budget.max_gpu_hours is not None:
        raise err(
            ("budget", "max_gpu_hours"),
            f"backend {cfg.backend} cannot cap GPU-hours (the Slurm backend does)",
            "use budget.max_usd on the clouds",
        )
    if budget is None or budget.max_usd is None or Capability.BILLED not in rules(cfg.backend).capabilities:
        return
    info = catalog.resolve_machine(
        cloud := cfg.cloud, cfg.machine.type, cfg.machine.accelerator, cfg.machine.accelerator_count
    )
    if info.price_per_hour is None:
        raise err(
            ("budget", "max_usd"),
            f"the catalog has no {cloud} price for {info.machine_type}, so a cost cap cannot be enforced",
            "remove budget.max_usd or choose a priced machine",
        )
    per_hour = info.price_per_hour * cfg.replica_count
    seconds = int(budget.max_usd / per_hour * 3600)
    if seconds < MIN_BUDGET_SECONDS:
        raise err(
            ("budget", "max_usd"),
            f"${budget.max_usd:g} buys {seconds // 60} min on {cfg.replica_count} × "
            f"{info.machine_type} at {money(per_hour)}/h ({info.price_region} list price, {info.price_date})",
            f"raise max_usd to at least {money(least_budget(per_hour))} or choose a cheaper machine",
        )
