"""The local backend: the package's cached env, the contract's files, the replicas' processes."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from cloudtrain import environment_vars, history
from cloudtrain.backend_rules import Capabilities, Capability, Refusal
from cloudtrain.backends import DEFAULT_CONTRACT, cuda
from cloudtrain.backends.base import Backend, BackendFacts, Facts, JobStatus, Words
from cloudtrain.backends.environment import ReplicaPlan
from cloudtrain.backends.local import supervisor
from cloudtrain.backends.local.find import find_run, known_places
from cloudtrain.backends.local.job import RUNS_DIR, LocalJob, RecordedJob
from cloudtrain.backends.local.processes import Launch, free_ports
from cloudtrain.backends.local.record import RUN_DIR
from cloudtrain.backends.runner import contract, env_keys, venv
from cloudtrain.backends.runner import image as runner_image
from cloudtrain.backends.runner.buckets import bucket_store
from cloudtrain.backends.runner.image import Image
from cloudtrain.backends.runner.interpreters import find_python, probe
from cloudtrain.backends.secrets_here import resolve_here
from cloudtrain.config.schema import JobConfig
from cloudtrain.data.cache import fetch
from cloudtrain.errors import BackendError, CredentialsError, UsageError
from cloudtrain.history import cache_dir
from cloudtrain.packaging import BuiltPackage, required
from cloudtrain.packaging.script import extract_sources
from cloudtrain.secrets.masking import ValueMasker, secret_values
from cloudtrain.spec import DataChannel, JobSpec
from cloudtrain.statefiles import Damage, load_json_object, write_atomic

log = logging.getLogger("cloudtrain.local")

# Inherited variables that would leak this shell's setup into the job (old contracts, Python path overrides)
_STRIP_PREFIXES = environment_vars.NOT_PASSED_ON_PREFIXES
GRACE_PERIOD_VAR = environment_vars.PREEMPTION_GRACE  # trainer.preemption.GRACE_VAR
_STRIP = set(environment_vars.NOT_PASSED_ON)


def detect_gpus() -> int:
    """NVIDIA GPUs on this machine, as SageMaker counts them (``nvidia-smi --list-gpus``)."""
    if shutil.which("nvidia-smi") is None:
        return 0
    try:
        out = subprocess.run(["nvidia-smi", "--list-gpus"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def tpu_note(spec: JobSpec) -> str | None:
    """The one line ``--local`` says for a TPU config: what runs instead."""
    if not spec.machine.tpu_cores:
        return None
    return (
        f"{spec.machine.type} is a TPU VM ({spec.machine.tpu_cores} TPU cores on Vertex AI); --local has no TPU "
        "and runs the same trainer on this machine's CPU/GPUs with the strategy it finds here, not TPUStrategy"
    )


def child_env(
    base: Mapping[str, str],
    spec: JobSpec,
    plan: contract.ReplicaPlan,
    env_dir: Path,
    cuda: str | None,
    *,
    shared_gpus: bool = False,
    secrets: Mapping[str, str] = {},
) -> dict[str, str]:
    """This shell's variables less inherited contracts, then the config's ``env`` and ``secrets`` values, then
    the contract. ``cuda``: this replica's GPUs; ``shared_gpus``: replicas share GPUs, so TensorFlow must not
    take all their memory at start."""
    env = {k: v for k, v in base.items() if k not in _STRIP and not k.startswith(_STRIP_PREFIXES)}
    env.update(spec.env)
    env.update(secrets)
    env.update(plan.env)
    env[environment_vars.PYTHONUNBUFFERED] = "1"
    # The bundled trainer saves at once on SIGTERM (Ctrl-C) instead of training on for the cloud's grace period.
    env.setdefault(GRACE_PERIOD_VAR, "0")
    env[environment_vars.VIRTUAL_ENV] = str(env_dir)
    path = env.get(environment_vars.PATH, os.defpath)
    env[environment_vars.PATH] = os.pathsep.join([str(env_keys.env_python(env_dir).parent), path])
    if cuda is not None:
        env[environment_vars.CUDA_VISIBLE_DEVICES] = cuda
    if shared_gpus:
        env.setdefault(environment_vars.TF_FORCE_GPU_ALLOW_GROWTH, "true")
    return env


def prepare(plans: list[contract.ReplicaPlan]) -> None:
    """Create what the plans list: folders, config files, channel links."""
    for p in plans:
        for d in p.dirs:
            Path(d).mkdir(parents=True, exist_ok=True)
        for path, text in p.files.items():  # 0600: hyperparameters.json holds the values as the job reads them,
            write_atomic(Path(path), text)  # (mkstemp), never through a link left there
        for folder, sdist in p.unpack.items():
            extract_sources(Path(sdist), Path(folder))
        for link, target in p.links.items():
            Path(link).parent.mkdir(parents=True, exist_ok=True)
            if os.path.islink(link):
                os.unlink(link)  # a rerun into the same folder: point at this run's data
            os.symlink(os.path.abspath(target), link, target_is_directory=True)


def fetch_bucket_channel(spec: JobSpec, channel: DataChannel) -> Path:
    """Download a gs:// or s3:// channel once into the cache, with the cloud's real client library."""
    try:
        store = bucket_store(spec, channel)
        return fetch(channel.source, cache_dir() / "data", store=store)
    except CredentialsError as exc:
        raise CredentialsError(
            f"data channel {channel.name!r} ({channel.source}) is downloaded for a local run, and {exc.message}",
            exc.hint,
        ) from None


def shard_channel(folder: Path, dest: Path, hosts: list[str]) -> list[str]:
    """SageMaker's ``ShardedByS3Key`` here: host *i* of *n* gets every *n*-th file (in key order), as
    links in a folder of its own, so each replica sees its share as it would in the cloud."""
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    shutil.rmtree(dest, ignore_errors=True)
    out = []
    for i, host in enumerate(hosts):
        for rel in files[i :: len(hosts)]:
            link = dest / host / rel
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.path.abspath(folder / rel), link)
        (dest / host).mkdir(parents=True, exist_ok=True)
        out.append(str(dest / host))
    return out


def copy_checkpoints(plans: list[contract.ReplicaPlan], source: str) -> None:
    """``--resume``: the continued run's checkpoints into this run's checkpoint folder(s), as SageMaker
    copies its checkpoint S3 prefix to /opt/ml/checkpoints when a job starts; the old run stays as it was."""
    if "://" in source or not Path(source).is_dir():
        raise UsageError(
            f"--resume: no local checkpoint folder {source}",
            hint="a local run continues a local run's checkpoints; its folder must still exist",
        )
    for target in sorted({p.checkpoint_dir for p in plans}):
        if os.path.abspath(target) != os.path.abspath(source):
            shutil.copytree(source, target, dirs_exist_ok=True)


def _claim(out: Path, spec: JobSpec) -> None:
    """Take the run's folder for this run alone: a folder cloudtrain chose is created exclusively; in one the user
    named, the run's record (``local-run/``) is, so a second run into the same ``output_dir`` is refused in one
    line and the first run's record, logs and status survive."""
    if _chosen(out, spec):
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            out.mkdir()
        except FileExistsError:
            raise BackendError(
                f"{out} already exists: another run has this job name",
                hint="submit again: each submit picks a new job name",
            ) from None
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / RUN_DIR).mkdir()
    except FileExistsError:
        raise UsageError(
            f"output_dir {out} already holds the record of run {_run_in(out)}: a second run there would replace it",
            hint=f"give this run another output_dir (--set output_dir=...), or remove {out / RUN_DIR} first",
        ) from None
    except OSError as exc:
        raise UsageError(f"output_dir {out}: cannot create it ({exc.strerror or exc})") from None


def _chosen(out: Path, spec: JobSpec) -> bool:
    """Whether ``out`` is the folder cloudtrain chose for this run (under RUNS_DIR, named by the job)."""
    return out.parent == Path(os.path.abspath(RUNS_DIR)) and out.name == spec.job_name


def _release(out: Path, spec: JobSpec) -> None:
    """Give back what :func:`_claim` took when the run did not start: its record folder, and the run's folder
    when cloudtrain chose it (and it is empty)."""
    for folder in (out / RUN_DIR, out) if _chosen(out, spec) else (out / RUN_DIR,):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only an empty folder: anything written there stays


def _run_in(out: Path) -> str:
    """The id of the run recorded in ``out`` (its folder's name when its status cannot be read)."""
    data = load_json_object(out / RUN_DIR / "status.json")
    job_id = None if isinstance(data, Damage) else data.get("job_id")
    return str(job_id) if isinstance(job_id, str) and job_id else out.name


def _replica(spec: JobSpec, p: ReplicaPlan, argv: list[str], mask: Callable[[str], str] = str) -> dict[str, Any]:
    return {"name": p.name, "argv": argv, "cwd": p.cwd, "env": {k: mask(v) for k, v in {**spec.env, **p.env}.items()}}


class LocalBackend(BackendFacts):
    """``submit`` runs the job here, under the environment contract of ``spec.cloud``."""

    name = "local"
    facts = Facts(
        section="local",  # local.python, read of a config for any backend (section.py)
        storage_schemes=("gs", "s3"),  # bucket channels are downloaded once into a cache
        # Not billed; no TPU image (a TPU config runs the CPU/GPU image here); no bucket job dir (the run writes to
        # its local folder); no containers (it runs a package here)
        capabilities=Capabilities.of(
            {
                Capability.SCRIPT_ARGS,
                Capability.FOLLOWS_TARGET,  # the contract of the config's ``target``
                Capability.RUNS_HERE,
                Capability.SWEEPS_HERE,  # one Optuna study here, its trials local runs
            },
            CONTAINERS=Refusal(
                "--local runs a Python package on this machine; it does not start containers ({image})",
                "run the package (package.path, package.module) instead of container, or run the "
                "image with docker yourself",
            ),
        ),
        contract=DEFAULT_CONTRACT,  # without a target
    )
    words = Words(
        title="this machine",
        local_data="linked",
        bucket_data="downloaded once into the local cache",
    )

    def default_output_dir(self, config: JobConfig, run_id: str) -> str:
        return str(Path(RUNS_DIR, run_id))

    def __init__(
        self,
        *,
        cache_root: Path | None = None,
        stop_grace_s: float = 10.0,
        gpu_count: Callable[[], int] = detect_gpus,
        cpu_count: Callable[[], int | None] = os.cpu_count,
        channels: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
        fetch_channel: Callable[[JobSpec, DataChannel], Path] | None = None,
        image_for: Callable[[JobSpec], Image] | None = None,
        log: Callable[[str], None] | None = None,
        gpu_visible: Callable[[], bool] | None = None,
    ):
        """``channels``: name → local folder, on top of the spec's own ``data:`` channels;
        ``fetch_channel``: how a bucket channel becomes a local folder (default: the download cache);
        ``gpu_visible``: whether a GPU shows without ``nvidia-smi`` (default: ``/dev/nvidia0`` … when
        ``gpu_count`` is the real count, else never: a test that sets the count decides)."""
        self._gpu_visible = gpu_visible or (cuda.gpu_visible if gpu_count is detect_gpus else (lambda: False))
        self._cache_root = cache_root
        self._image_for = image_for or functools.partial(runner_image.image_for, find=find_python, probe=probe)
        self._log = log or (lambda message: print(message, file=sys.stderr, flush=True))
        self._grace = stop_grace_s
        self._gpu_count = gpu_count
        self._cpu_count = cpu_count
        self._channels = dict(channels or {})
        self._environ = environ
        self._fetch = fetch_channel or fetch_bucket_channel

    @functools.cached_property
    def _gpus(self) -> int:
        return self._gpu_count()

    def _image(self, spec: JobSpec) -> tuple[Image, cuda.GpuBuild]:
        """The image layer for ``spec`` on this machine: with a GPU here, TensorFlow with its CUDA wheels."""
        image = self._image_for(spec)
        count = self._gpus
        here = f"{count} GPU{'s' if count != 1 else ''} here" if count else None
        build = cuda.gpu_build(image.packages, gpus=here or ("a GPU visible here" if self._gpu_visible() else None))
        return replace(image, packages=build.packages), build

    def _plans(
        self, spec: JobSpec, package: BuiltPackage, out: Path, ports: list[int], channels: Mapping[str, str]
    ) -> list[ReplicaPlan]:
        gpus = contract.gpu_assignment(self._gpus, spec.replica_count)
        per_replica = [self._gpus if g is None else len(g.split(",")) for g in gpus]
        return contract.plan(
            spec,
            output_dir=str(out),
            ports=ports,
            package=package,
            channels=channels,
            num_gpus=per_replica,
            num_cpus=self._cpu_count() or 1,
        )

    def _channel_dirs(self, spec: JobSpec, *, fetch: bool) -> dict[str, str]:
        """Channel → local folder: a local folder as it is; a bucket channel downloaded into the
        cache (``fetch``), else shown by its source (``render`` does no I/O)."""
        dirs = {
            n: str(self._fetch(spec, ch)) if fetch and ch.kind != "local" else ch.source
            for n, ch in spec.channels.items()
        }
        return {**dirs, **self._channels}

    def render(self, spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
        """What ``submit`` would start. Ports show as 0: ``submit`` picks free ones."""
        built = required(package, spec.job_name)  # a local run installs a package (no container: jobs)
        out, note = history.run_folder(spec.output_dir, spec.job_name)
        note = "; ".join(n for n in (note, tpu_note(spec)) if n) or None
        image, gpu = self._image(spec)
        env = env_keys.env_dir(built, image, self._cache_root)
        plans = self._plans(spec, built, out, [0] * spec.replica_count, self._channel_dirs(spec, fetch=False))
        data = {
            n: f"{c.source} (linked)" if c.kind == "local" else f"{c.source} (downloaded once into the cache)"
            for n, c in spec.channels.items()
        }
        return {
            "backend": "local",
            "contract": spec.cloud,
            "job_name": spec.job_name,
            "output_dir": str(out),
            **({"note": note} if note else {}),
            **({"resume_from": spec.resume.checkpoint_dir} if spec.resume else {}),
            "package": str(built.path),
            "environment": str(env),
            **({"data": data} if data else {}),
            "image_environment": {
                "layer": str(env_keys.image_dir(image, self._cache_root)),
                "python": image.python.path,
                "packages": list(image.packages),
                "tensorflow_build": gpu.line,
                **({"note": image.note} if image.note else {}),
            },
            "replicas": [
                {
                    **_replica(spec, p, contract.argv(spec, p, str(env_keys.env_python(env)), built)),
                    "files": sorted(p.files),
                }
                for p in plans
            ],
        }

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> LocalJob:
        """Run the job in this process: it ends when this process does (``submit`` follows it)."""
        job, launches = self._prepare_run(spec, package)
        local = LocalJob(**job)
        local._start(launches)
        return local

    def submit_detached(self, spec: JobSpec, package: BuiltPackage | None) -> RecordedJob:
        """Run the job in a process of its own (``submit --detach``): it keeps running after this one
        returns, and ``logs --follow``, ``status``, ``wait`` and ``cancel`` reach it from any command."""
        job, launches = self._prepare_run(spec, package)
        return supervisor.hand_over(job, launches, job["out"])

    def _prepare_run(self, spec: JobSpec, package: BuiltPackage | None) -> tuple[dict[str, Any], list[Launch]]:
        """Everything before the replicas start: the run folder, the environment, the launches;
        returns :class:`LocalJob`'s arguments and the launches."""
        built = required(package, spec.job_name)  # a local run installs a package (no container: jobs)
        out, note = history.run_folder(spec.output_dir, spec.job_name)
        _claim(out, spec)
        try:
            return self._prepare_claimed(spec, built, out, note)
        except BaseException:  # nothing ran: the folder is free for the next submit
            _release(out, spec)
            raise

    def _prepare_claimed(
        self, spec: JobSpec, built: BuiltPackage, out: Path, note: str | None
    ) -> tuple[dict[str, Any], list[Launch]]:
        image, gpu = self._image(spec)
        if image.note:
            self._log(image.note)  # a mapped: line
        if gpu.with_cuda:
            self._log(f"GPU environment: {gpu.line}")
        if note_tpu := tpu_note(spec):
            self._log(note_tpu)
        environment = venv.ensure_env(built, image, root=self._cache_root, log=self._log)
        note = "; ".join(n for n in (note, image.note) if n) or None
        channels: dict[str, Any] = dict(self._channel_dirs(spec, fetch=True))
        target = contract.contract_of(spec)
        for name, ch in spec.channels.items():
            if target.shards_channels and ch.distribution == "ShardedByS3Key" and spec.replica_count > 1:
                channels[name] = shard_channel(
                    Path(channels[name]),
                    out / RUN_DIR / "shards" / name,
                    target.replica_names(spec.replica_count),
                )
        plans = self._plans(spec, built, out, free_ports(spec.replica_count), channels)
        run_dir = out / RUN_DIR
        prepare(plans)
        if spec.resume:
            copy_checkpoints(plans, spec.resume.checkpoint_dir)
        base = dict(os.environ if self._environ is None else self._environ)
        secrets = resolve_here(spec.secrets, base)
        gpus = contract.gpu_assignment(self._gpus, spec.replica_count)
        shared = self._gpus > 0 and spec.replica_count > 1 and gpus[0] is None
        argvs = [contract.argv(spec, p, str(environment.python), built) for p in plans]
        launches = [
            Launch(
                p.name,
                argv,
                child_env(base, spec, p, environment.path, gpus[p.index], shared_gpus=shared, secrets=secrets),
                p.cwd,
                run_dir / f"{p.name}.log",
            )
            for p, argv in zip(plans, argvs, strict=True)  # one argv per plan
        ]
        # the values this run knows are secret: masked in replicas.json (where env: values are also inside
        # CLUSTER_SPEC / TF_CONFIG) and in every log line
        masker = ValueMasker([*secrets.values(), *secret_values(spec.env, spec.args, spec.hyperparameters)])
        replicas = [_replica(spec, p, argv, masker) for p, argv in zip(plans, argvs, strict=True)]
        write_atomic(run_dir / "replicas.json", json.dumps(replicas, indent=2))  # 0600, as mkstemp creates it
        job = dict(
            spec=spec, out=out, plans=plans, environment=environment, note=note, stop_grace_s=self._grace, masker=masker
        )
        return job, launches

    def parse_job_id(self, text: str) -> tuple[str, dict[str, str]] | None:
        """A run's output folder, from any directory (the path history records), or a run's id under
        ``cloudtrain-runs/`` of this folder or one above it: found without history."""
        folder = find_run(text)
        return (text, {}) if folder is not None and (folder / RUN_DIR / "status.json").is_file() else None

    def attach(self, job_id: str, *, region: str | None = None, project: str | None = None) -> RecordedJob:
        """A run by its output folder (found again in its project when the project moved), or by its id under
        ./cloudtrain-runs (see :mod:`.find`). A missing or damaged ``status.json`` is a StateError when read."""
        folder = find_run(job_id)
        if folder is None and os.path.isabs(job_id):  # moved with a project history knows in its new place
            runs = [e.name for e in history.recent(200, backend=self.name) if e.name != job_id]
            folder = find_run(job_id, elsewhere=known_places(runs))
        if folder is not None:
            if os.path.isabs(job_id) and os.path.abspath(folder) != os.path.normpath(job_id):
                history.note_moved(job_id, os.path.abspath(folder))  # found from anywhere from now on
            return RecordedJob(folder / RUN_DIR / "status.json")
        if os.path.isabs(job_id):
            raise UsageError(
                f"local run {Path(job_id).name} was recorded in {job_id}, which is gone",
                f"pass the folder it is in now instead of the id (NEW_PLACE/{Path(job_id).name}), "
                "or run the command inside the project it moved with",
            )
        raise UsageError(
            f"no local run {job_id!r} here or under {RUNS_DIR}/",
            "pass the run's output folder, or run the command inside the project that ran it",
        )

    def list_jobs(self, *, region: str | None = None, project: str | None = None, limit: int = 20) -> list[JobStatus]:
        found = sorted(Path(RUNS_DIR).glob(f"*/{RUN_DIR}/status.json"), key=lambda p: p.stat().st_mtime)
        found.reverse()
        return [RecordedJob(path).recorded() for path in found[:limit]]  # a damaged run: UNKNOWN, one warning


BACKEND: Backend = LocalBackend()  # mypy checks it is a whole Backend
