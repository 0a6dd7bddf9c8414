"""Checks that need the cloud catalog or the file system: what a cloud would reject after an upload, refused offline."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from cloudtrain import catalog, environment_vars
from cloudtrain.backend_rules import Capability
from cloudtrain.config.loaded import LoadedConfig, check_control_characters
from cloudtrain.config.problems import Problems
from cloudtrain.config.rules import Check, ConfigRules, refusal, rules
from cloudtrain.config.schema import DataChannel, JobConfig
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


@dataclass(frozen=True)
class _Job:
    """What each named check reads (the config, its backend, whose contract it follows) and where it reports."""

    loaded: LoadedConfig
    problems: Problems
    backend: ConfigRules

    @cached_property
    def contract(self) -> ConfigRules:
        """Whose contract the job follows (the backend, or local's target): imported when a check asks."""
        return rules(self.loaded.config.cloud)

    def has(self, capability: Capability) -> bool:
        return capability in self.backend.facts.capabilities

    def run(self, checks: Iterable[Check]) -> None:
        """Each ``(fields it reads, check)`` whose fields have not failed, its errors collected."""
        for fields, check in checks:
            self.problems.run(fields, check)

    def refuse(self, reads: tuple[str, ...], path: tuple[str, ...], message: str, hint: str | None = None) -> None:
        def check() -> None:
            raise self.loaded.error(path, message, hint)

        self.problems.run(reads, check)

    def catalog(
        self,
        reads: tuple[str, ...],
        find: Callable[[], object],
        path: tuple[str, ...] | Callable[[catalog.CatalogError], tuple[str, ...]] | None = None,
    ) -> None:
        """``find()``, a catalog look-up; its refusal at ``path`` (or where it says), with the nearest valid."""

        def check() -> None:
            try:
                find()
            except catalog.CatalogError as exc:
                at = path(exc) if callable(path) else path
                at = at or ("machine", {"machine_type": "type"}.get(exc.field or "", exc.field or "type"))
                raise self.loaded.error(at, str(exc), _alternatives(exc)) from None

        self.problems.run(reads, check)


def _target_and_gpu_type(job: _Job) -> None:
    cfg, follows_target = job.loaded.config, job.has(Capability.FOLLOWS_TARGET)
    job.run([((), lambda: check_control_characters(job.loaded))])
    if cfg.target and not follows_target:
        message = f"target is only for backend local (backend is {cfg.backend})"
        job.refuse(("target",), ("target",), message, "remove target")
    if cfg.machine.accelerator_type and not follows_target and "accelerator_type" not in job.backend.facts.machine_keys:
        message = f"machine.accelerator_type names a cluster's GPU type (--gres); a {cfg.backend} job does not take it"
        path = ("machine", "accelerator_type")
        job.refuse(path, path, message, "remove it; the GPU is machine.accelerator (or the machine type)")


def _region_and_machine(job: _Job) -> None:
    """The catalog's regions and machines (a cluster checks its own)."""
    cfg, m = job.loaded.config, job.loaded.config.machine
    if job.has(Capability.CLUSTER):
        return
    job.catalog(("target", "backend", "region"), lambda: catalog.check_region(cfg.cloud, cfg.region), ("region",))
    job.catalog(
        ("target", "backend", "machine"),
        lambda: catalog.resolve_machine(cfg.cloud, m.type, m.accelerator, m.accelerator_count),
    )
    if job.problems.failed("machine") and not job.problems.failed("machine.type"):
        # another key of machine: failed; the type alone is still checked, as it depends on no other key
        job.run([(("target", "backend", "machine.type"), lambda: _machine_type(job.loaded))])
    if not job.has(Capability.FOLLOWS_TARGET):  # a local run needs no region's GPUs
        job.run([(("target", "backend", "region", "machine"), lambda: _offered(job.loaded))])


def _machine_type(loaded: LoadedConfig) -> None:
    try:
        catalog.resolve_machine(loaded.config.cloud, loaded.config.machine.type, None, None)
    except catalog.CatalogError as exc:
        if exc.field in (None, "machine_type"):  # about the type itself, not its accelerators
            raise loaded.error(("machine", "type"), str(exc), _alternatives(exc)) from None


def _offered(loaded: LoadedConfig) -> None:
    """After region and machine passed: does this region have the machine's accelerators?"""
    cfg = loaded.config
    try:
        m = catalog.resolve_machine(cfg.cloud, cfg.machine.type, cfg.machine.accelerator, cfg.machine.accelerator_count)
        catalog.check_offered(m, cfg.region)
    except catalog.CatalogError as exc:
        here = catalog.offered_in(cfg.cloud, cfg.region)
        other = f"a machine with {' / '.join(here)}" if here else "another machine"
        raise loaded.error(("region",), str(exc), f"set region: {exc.alternatives[0]}, or {other}") from None


def _image(job: _Job) -> None:
    """A TPU job's topology and image, or the prebuilt image of image.tensorflow in the region."""
    cfg, image = job.loaded.config, job.loaded.config.image
    if job.has(Capability.TPUS) and cfg.machine.type in catalog.tpu_machine_types():
        places = {"tpu_topology": ("machine", "tpu_topology"), "tensorflow": ("image", "tensorflow")}
        reads = ("target", "backend", "machine", "region", "image", "replica_count")
        job.catalog(reads, lambda: _tpu_job(cfg), lambda exc: places.get(exc.field or "", (exc.field or "machine",)))
    elif image.uri is None and image.tensorflow is not None and not job.has(Capability.CLUSTER):
        job.catalog(
            ("target", "backend", "region", "image"),
            lambda: catalog.training_image(
                cfg.cloud, cfg.region, image.tensorflow or "", gpu=False, py_version=catalog.python_tag(image.python)
            ),
            lambda exc: ("image", "python" if image.python and "Python" in str(exc) else "tensorflow"),
        )


def _tpu_job(cfg: JobConfig) -> None:
    m = cfg.machine
    info = catalog.resolve_machine(cfg.cloud, m.type, m.accelerator, m.accelerator_count)
    if info.tpu is not None:
        catalog.check_tpu_job(
            info, topology=m.tpu_topology, region=cfg.region, replica_count=cfg.replica_count,
            tensorflow=cfg.image.tensorflow, own_image=bool(cfg.image.uri or cfg.container),
        )  # fmt: skip


def _backend_own(job: _Job) -> None:
    """The backend's own checks, then where a backend that stages in a bucket reads and writes."""
    job.run(job.backend.config_checks(job.loaded))
    if job.has(Capability.STAGING):
        job.run((("backend", field), check) for field, check in _staging_checks(job.loaded))


def _runtime_and_spot(job: _Job) -> None:
    cfg = job.loaded.config
    longest = None if job.has(Capability.CLUSTER) else job.contract.facts.max_runtime_seconds
    if longest is not None and cfg.max_runtime > longest:
        message = f"received {cfg.max_runtime} s; {cfg.cloud} allows at most {longest} s"
        job.refuse(("max_runtime",), ("max_runtime",), message, f"set max_runtime: {longest // 86400}d or less")
    if cfg.spot.max_wait is None:
        return
    contract = job.contract
    if Capability.SPOT_MAX_WAIT not in contract.facts.capabilities:
        job.refuse(("spot",), ("spot", "max_wait"), *refusal(contract, Capability.SPOT_MAX_WAIT))
    elif cfg.spot.max_wait < cfg.max_runtime:
        message = f"received {cfg.spot.max_wait} s, shorter than max_runtime ({cfg.max_runtime} s)"
        job.refuse(("spot", "max_runtime"), ("spot", "max_wait"), message, "make max_wait at least max_runtime")


def _env_and_labels(job: _Job) -> None:
    for key in job.loaded.config.env:
        if not _ENV_NAME.match(key):
            message = f"{key!r} is not a valid environment variable name"
            job.refuse((f"env.{key}",), ("env", key), message, "use A-Z, 0-9 and _")
        elif environment_vars.reserved(key):
            said = f"{key!r} is set in the job by {environment_vars.reserved(key)}: a value of yours would replace it"
            job.refuse((f"env.{key}",), ("env", key), said, "rename the variable")
    for key in job.loaded.config.labels:
        if key.lower().startswith(RESERVED_LABEL_PREFIX):
            said = (
                f"{key!r} is one of cloudtrain's own labels (keys starting with {RESERVED_LABEL_PREFIX!r}): "
                "cloudtrain sets it to find the job again, and a value of yours would replace it"
            )
            job.refuse((f"labels.{key}",), ("labels", key), said, "rename the label")
    if not job.has(Capability.CLUSTER):  # a cluster's jobs carry no labels to the contract's cloud
        job.run(job.contract.contract_checks(job.loaded))


def _tensorboard_and_experiment(job: _Job) -> None:
    cfg, backend = job.loaded.config, job.backend
    followed = job.has(Capability.FOLLOWS_TARGET) and cfg.target  # --local of a cloud's config: events are here
    if cfg.tensorboard not in (None, False) and not job.has(Capability.MANAGED_TENSORBOARD) and not followed:
        where = "this machine" if job.has(Capability.RUNS_HERE) else backend.words.title or cfg.backend
        job.refuse(
            ("backend", "tensorboard"), ("tensorboard",), *refusal(backend, Capability.MANAGED_TENSORBOARD, where)
        )
    if cfg.experiment is not None and not _EXPERIMENT.match(cfg.experiment):
        said = (
            f"received {cfg.experiment!r}; an experiment name is lowercase letters, digits and -, "
            "at most 63, not ending in - (a SageMaker experiment and a Vertex label value both)"
        )
        fixed = re.sub(r"[^a-z0-9-]+", "-", cfg.experiment.lower()).strip("-")[:63] or "baseline"
        job.refuse(("experiment",), ("experiment",), said, f"use experiment: {fixed}")


def _what_runs(job: _Job) -> None:
    """Data, secrets, the package or container, scheduling and the sweep."""
    loaded, cluster = job.loaded, job.has(Capability.CLUSTER)
    checks: list[Check] = []
    if not cluster:  # shared paths on the cluster are not folders here: its own checks read data:
        checks.append((("backend", "data"), lambda: _check_data(loaded)))
    checks.append((("backend", "secrets", "env", "container", "project", "region"), lambda: check_secrets(loaded)))
    if loaded.config.container is not None:
        container = ("backend", "container", "package", "image", "distribution", "sweep")
        checks.append((container, lambda: _check_container(loaded)))
    else:
        script = ("backend", "package", "hyperparameters", "distribution", "image")
        checks.append((script, lambda: check_script_mode(loaded)))
        if loaded.config.package.script is None:
            checks.append((("package",), lambda: _check_package(loaded)))
    if not cluster:
        scheduling = ("backend", "machine", "replica_count", "flex_start", "spot", "budget")
        checks.append((scheduling, lambda: _check_scheduling(loaded)))
    if loaded.config.sweep is not None:
        checks.append((("backend", "sweep", "hyperparameters"), lambda: _check_sweep(loaded)))
    job.run(checks)


#: The config checker's table of named checks, in the order they run.
CHECKS: tuple[Callable[[_Job], None], ...] = (
    _target_and_gpu_type,
    _region_and_machine,
    _image,
    _backend_own,
    _runtime_and_spot,
    _env_and_labels,
    _tensorboard_and_experiment,
    _what_runs,
)


def check_config(loaded: LoadedConfig, problems: Problems | None = None) -> None:
    """Every check of :data:`CHECKS` whose fields are valid, each error collected (:class:`Problems`); raises them at
    the end. ``problems`` may already hold the schema's errors: checks reading those fields are skipped."""
    problems = problems if problems is not None else Problems()
    job = _Job(loaded, problems, rules(loaded.config.backend))
    for check in CHECKS:
        check(job)
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
    if Capability.CONTAINERS not in backend.facts.capabilities:
        raise err(("container",), *refusal(backend, Capability.CONTAINERS, image=image))
    if cfg.sweep is not None:
        raise err(
            ("container",),
            "a sweep runs a package, not your own container",
            "remove sweep, or run the package (package.path, package.module) instead of container",
        )
    own = backend.facts.image_registry
    if Capability.ANY_REGISTRY not in backend.facts.capabilities and not (own and own.match(image)):
        raise err(("container", "image_uri"), *refusal(backend, Capability.ANY_REGISTRY, image=image))


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
    # the limits of the contract's tuning job: trials at once, values per categorical parameter
    contract = rules(cfg.cloud)
    at_once, most = contract.facts.max_parallel_trials, contract.facts.max_categorical_values
    if at_once is not None and sweep.parallel_trials > at_once:
        raise err(("sweep", "parallel_trials"), f"{contract.words.title} runs at most {at_once} trials at once")
    for param in params:
        count = len(param.grid_values()) if sweep.algorithm == "grid" or param.kind != "double" else 0
        if (
            param.kind != "double"
            and (param.kind != "integer" or sweep.algorithm == "grid")
            and count > (most or count)
        ):
            raise err(
                ("sweep", "params", param.name),
                f"{count} values; {contract.words.title} allows {most} per categorical parameter",
                "use fewer values or an integer range with algorithm random or bayesian",
            )


def _check_data(loaded: LoadedConfig) -> None:
    """Every problem of ``data:`` at once, one line each: names, schemes, local folders."""
    problems = [p for name, channel in loaded.config.data.items() for p in channel_problems(loaded, name, channel)]
    contract = rules(loaded.config.cloud)
    most = contract.facts.max_channels
    if most is not None and len(loaded.config.data) > most:
        problems.append(
            loaded.error(
                ("data",),
                f"{len(loaded.config.data)} channels; {contract.words.title} allows at most {most}",
                "put several folders under one prefix",
            )
        )
    if problems:  # collected one by one, in line order, by the checker's Problems
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
            if getattr(channel, field) is not None and field not in rules(cfg.cloud).facts.channel_options:
                out.append(
                    err(
                        ("data", name, field),
                        f"{field} is a SageMaker setting; "
                        f"{rules(cfg.cloud).words.title} reads gs:// through Cloud Storage FUSE",
                        f"remove {field}",
                    )
                )
    return out


#: Folders of the system, never data: reading them uploads the machine's secrets or never ends.
SYSTEM_FOLDERS = tuple(Path(p) for p in ("/proc", "/sys", "/dev", "/etc"))


def local_folder_problem(source: str, base: Path) -> tuple[str, str] | None:
    """Why a local data folder is refused before anything is read (problem, fix), or None: a relative path may not climb
    above the config's folder (judged on the text), and no path may name the root or a system folder."""
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
    scheme = f"{rules(cfg.backend).facts.storage_schemes[0]}://"

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
            if value and FILL_IN in value:  # what `cloudtrain init` wrote for the user to fill in
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
    if cfg.flex_start.enabled and Capability.FLEX_START not in contract.facts.capabilities:
        raise err(("flex_start", "enabled"), *refusal(contract, Capability.FLEX_START))
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
    if budget is None or budget.max_usd is None or Capability.BILLED not in rules(cfg.backend).facts.capabilities:
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
