"""The local backend and its job handle: the package's env, the contract, the replicas, the summary."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from cloudtrain.backends.base import JobState, JobStatus, LogLine
from cloudtrain.backends.local import contract, venv
from cloudtrain.backends.local.processes import Launch, Outcome, ReplicaGroup, free_ports
from cloudtrain.errors import BackendError
from cloudtrain.spec import JobSpec

RUNS_DIR = "cloudtrain-runs"
SAGEMAKER_ROOT = "/opt/ml"  # what a trainer that ignores SAGEMAKER_BASE_DIR writes to
RUN_DIR = "local-run"  # inside the output dir: replica logs, replicas.json, status.json
EVENT_PREFIX = '{"event"'

# The local backend's own states, mapped through one table.
STATES = {
    "running": JobState.RUNNING,
    "succeeded": JobState.SUCCEEDED,
    "failed": JobState.FAILED,
    "timed_out": JobState.FAILED,
    "cancelled": JobState.CANCELLED,
}

# Inherited variables that would leak this shell's setup into the job: cloud contracts from
# an earlier run, and Python path overrides no cloud machine has.
_STRIP_PREFIXES = ("AIP_", "SM_", "CLOUD_ML_", "SAGEMAKER_")
_STRIP = {"TF_CONFIG", "CLUSTER_SPEC", "TRAINING_JOB_NAME", "CURRENT_HOST", "PYTHONPATH", "PYTHONHOME",
          "PYTHONSTARTUP", "VIRTUAL_ENV", "CUDA_VISIBLE_DEVICES"}  # fmt: skip


def detect_gpus() -> int:
    """NVIDIA GPUs on this machine, as SageMaker counts them (``nvidia-smi --list-gpus``)."""
    if shutil.which("nvidia-smi") is None:
        return 0
    try:
        out = subprocess.run(["nvidia-smi", "--list-gpus"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def output_dir_for(spec: JobSpec) -> tuple[Path, str | None]:
    """The local output dir (absolute) and, when the config named a bucket, why it is not used."""
    if "://" in spec.output_dir:
        note = f"output_dir {spec.output_dir} is a bucket; local runs write to the local folder instead"
        return Path(os.path.abspath(os.path.join(RUNS_DIR, spec.job_name))), note
    return Path(os.path.abspath(os.path.expanduser(spec.output_dir))), None


def child_env(base: Mapping[str, str], spec: JobSpec, plan: contract.ReplicaPlan, env_dir: Path,
              cuda: str | None) -> dict[str, str]:  # fmt: skip
    env = {k: v for k, v in base.items() if k not in _STRIP and not k.startswith(_STRIP_PREFIXES)}
    env.update(spec.env)
    env.update(plan.env)
    env["PYTHONUNBUFFERED"] = "1"
    env["VIRTUAL_ENV"] = str(env_dir)
    env["PATH"] = os.pathsep.join([str(venv.env_python(env_dir).parent), env.get("PATH", os.defpath)])
    if cuda is not None:
        env["CUDA_VISIBLE_DEVICES"] = cuda
    return env


def prepare(plans: list[contract.ReplicaPlan], out: Path, channels: Mapping[str, str]) -> None:
    """Create what the plans list: folders, config files, channel links."""
    for p in plans:
        for d in p.dirs:
            Path(d).mkdir(parents=True, exist_ok=True)
        for path, text in p.files.items():
            Path(path).write_text(text)
    if channels and plans and plans[0].name.startswith("algo-"):
        for link, target in contract.channel_links(str(out), [p.name for p in plans], channels).items():
            if not os.path.lexists(link):
                os.symlink(os.path.abspath(target), link, target_is_directory=True)


class LocalBackend:
    """``submit`` runs the job here, under the environment contract of ``spec.cloud``."""

    name = "local"

    def __init__(
        self,
        *,
        cache_root: Path | None = None,
        stop_grace_s: float = 10.0,
        gpu_count: Callable[[], int] = detect_gpus,
        cpu_count: Callable[[], int | None] = os.cpu_count,
        channels: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
    ):
        self._cache_root = cache_root
        self._grace = stop_grace_s
        self._gpu_count = gpu_count
        self._cpu_count = cpu_count
        self._channels = dict(channels or {})
        self._environ = environ
        self._gpus: int | None = None

    def _num_gpus(self) -> int:
        if self._gpus is None:
            self._gpus = self._gpu_count()
        return self._gpus

    def _plans(self, spec: JobSpec, package, out: Path, ports: list[int]) -> list[contract.ReplicaPlan]:
        gpus = contract.gpu_assignment(self._num_gpus(), spec.replica_count)
        per_replica = [self._num_gpus() if g is None else len(g.split(",")) for g in gpus]
        return contract.plan(
            spec, output_dir=str(out), ports=ports, package_uri=str(package.path),
            channels=self._channels, num_gpus=per_replica, num_cpus=self._cpu_count() or 1,
        )  # fmt: skip

    def _argv(self, spec: JobSpec, python: Path) -> list[str]:
        return [str(python), "-m", spec.package.module, *spec.module_args()]

    def render(self, spec: JobSpec, package) -> dict[str, Any]:
        """What ``submit`` would start. Ports show as 0: ``submit`` picks free ones."""
        out, note = output_dir_for(spec)
        env = venv.env_dir(package.sha256, self._cache_root)
        plans = self._plans(spec, package, out, [0] * spec.replica_count)
        return {
            "backend": "local",
            "contract": spec.cloud,
            "job_name": spec.job_name,
            "output_dir": str(out),
            **({"note": note} if note else {}),
            "package": str(package.path),
            "environment": str(env),
            "replicas": [
                {
                    "name": p.name,
                    "argv": self._argv(spec, venv.env_python(env)),
                    "cwd": p.cwd,
                    "env": {**spec.env, **p.env},
                    "files": sorted(p.files),
                }
                for p in plans
            ],
        }

    def submit(self, spec: JobSpec, package) -> LocalJob:
        out, note = output_dir_for(spec)
        environment = venv.ensure_env(package, root=self._cache_root)
        plans = self._plans(spec, package, out, free_ports(spec.replica_count))
        run_dir = out / RUN_DIR
        prepare(plans, out, self._channels)
        base = dict(os.environ if self._environ is None else self._environ)
        gpus = contract.gpu_assignment(self._num_gpus(), spec.replica_count)
        argv = self._argv(spec, environment.python)
        launches = [
            Launch(p.name, argv, child_env(base, spec, p, environment.path, gpus[p.index]), p.cwd,
                   run_dir / f"{p.name}.log")  # fmt: skip
            for p in plans
        ]
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "replicas.json").write_text(
            json.dumps([{"name": p.name, "argv": argv, "cwd": p.cwd, "env": {**spec.env, **p.env}} for p in plans],
                       indent=2)  # fmt: skip
        )
        job = LocalJob(spec, out, plans, environment, note=note, stop_grace_s=self._grace)
        job._start(launches)
        return job

    def attach(self, job_id: str, *, region: str, project: str | None = None) -> RecordedJob:
        path = Path(RUNS_DIR, job_id, RUN_DIR, "status.json")
        if not path.is_file():
            raise BackendError(f"no local run {job_id!r} under {RUNS_DIR}/", "local runs are found by job name in ./cloudtrain-runs")
        return RecordedJob(path)

    def list_jobs(self, *, region: str, project: str | None = None, limit: int = 20) -> list[JobStatus]:
        found = sorted(Path(RUNS_DIR).glob(f"*/{RUN_DIR}/status.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        return [RecordedJob(p).status() for p in found[:limit]]


class LocalJob:
    """A running local job: the replicas, their merged lines, and the end-of-run summary."""

    def __init__(self, spec: JobSpec, out: Path, plans, environment: venv.PackageEnv, *, note: str | None,
                 stop_grace_s: float):  # fmt: skip
        self.spec = spec
        self.job_id = spec.job_name
        self.output_dir = out
        self.plans = list(plans)
        self.environment = environment
        self._note = note
        self._chief = self.plans[0]
        self._events: dict[str, dict] = {}  # last "epoch" / "done" event of the chief
        self._created = dt.datetime.now(dt.timezone.utc)
        self._ended: dt.datetime | None = None
        self._final: JobStatus | None = None
        self._group: ReplicaGroup | None = None
        self._grace = stop_grace_s

    def _start(self, launches: list[Launch]) -> None:
        self._opt_ml_before = os.path.exists(SAGEMAKER_ROOT)
        self._group = ReplicaGroup(
            launches, stop_grace_s=self._grace, max_runtime_s=self.spec.max_runtime_seconds, on_line=self._watch
        )
        self._group.start()
        env = self.environment
        how = "reused" if env.cached else f"built in {env.setup_seconds:.1f}s"
        self._group.notice(f"{self.spec.cloud} contract, {len(launches)} replica(s); environment {env.path} ({how})")
        self._group.notice(f"output: {self.output_dir}")
        if self._note:
            self._group.notice(self._note, "WARNING")
        self._record(self._status())

    def _watch(self, line: LogLine) -> None:
        if line.replica == self._chief.name and line.message.startswith(EVENT_PREFIX):
            try:
                event = json.loads(line.message)
            except ValueError:
                return
            if isinstance(event, dict) and event.get("event") in ("epoch", "done"):
                self._events[event["event"]] = event

    # --- JobHandle -------------------------------------------------------------------------

    def status(self) -> JobStatus:
        if self._final is not None:
            return self._final
        if self._group.done:
            return self._finish(self._group.wait())
        return self._status()

    def logs(self, follow: bool = False) -> Iterator[LogLine]:
        return self._group.lines(follow)

    def wait(self) -> JobStatus:
        return self.status() if self._final else self._finish(self._group.wait())

    def cancel(self) -> JobStatus:
        return self.status() if self._final else self._finish(self._group.cancel())

    # --- summary ---------------------------------------------------------------------------

    def _status(self, native: str = "running", outcome: Outcome | None = None) -> JobStatus:
        group = self._group
        codes = outcome.exit_codes if outcome else group.exit_codes()
        end = group.ended if group.ended is not None else None
        wall = (end if end is not None else time.monotonic()) - group.started
        details: dict[str, Any] = {
            "wall_time_s": round(wall, 3),
            "metrics": self._metrics(),
            "model_dir": self._chief.model_dir,
            "checkpoint_dir": self._chief.checkpoint_dir,
            "tensorboard_dir": self._chief.tensorboard_dir,
            "exit_codes": dict(codes),
            "output_dir": str(self.output_dir),
            "logs_dir": str(self.output_dir / RUN_DIR),
            "contract": self.spec.cloud,
            "replicas": [p.name for p in self.plans],
            "pids": group.pids,
            "environment": str(self.environment.path),
            "environment_cached": self.environment.cached,
            "environment_setup_s": round(self.environment.setup_seconds, 3),
        }
        metrics_file = self._metrics_file()
        if metrics_file:
            details["metrics_file"] = str(metrics_file)
        warnings = [self._note] if self._note else []
        leaked = self.spec.cloud == "sagemaker" and not self._opt_ml_before and os.path.exists(SAGEMAKER_ROOT)
        if outcome is not None and leaked:
            warnings.append(
                f"the job wrote to {SAGEMAKER_ROOT} on this machine, outside its local tree: the trainer does not "
                f"read SAGEMAKER_BASE_DIR; a later run may resume from those files (remove {SAGEMAKER_ROOT})"
            )
        if warnings:
            details["warnings"] = warnings
        message = None
        if outcome is not None:
            details["exit_code"] = _job_exit_code(native, outcome)
            if outcome.failed:
                details["failed_replica"] = outcome.failed
                message = f"replica {outcome.failed} exited with code {outcome.exit_codes[outcome.failed]}"
            elif native == "timed_out":
                message = f"stopped after max_runtime ({self.spec.max_runtime_seconds}s)"
            elif native == "cancelled":
                message = "cancelled"
        return JobStatus(
            job_id=self.job_id,
            name=str(self.output_dir),
            state=STATES[native],
            native_state=native,
            message=message,
            created=self._created,
            ended=self._ended,
            details=details,
        )

    def _finish(self, outcome: Outcome) -> JobStatus:
        if self._final is None:
            native = (
                "failed" if outcome.failed else "timed_out" if outcome.timed_out
                else "cancelled" if outcome.cancelled else "succeeded"
            )  # fmt: skip
            self._ended = dt.datetime.now(dt.timezone.utc)
            self._final = self._status(native, outcome)
            self._record(self._final)
        return self._final

    def _metrics_file(self) -> Path | None:
        model = Path(self._chief.model_dir)
        for candidate in (model / "metrics.json", *sorted(model.glob("*/metrics.json"))):
            if candidate.is_file():
                return candidate
        return None

    def _metrics(self) -> dict[str, Any]:
        """The chief's final metrics: its ``done`` line, else metrics.json, else its last epoch line."""
        source = self._events.get("done")
        if source is None and (path := self._metrics_file()) is not None:
            try:
                source = json.loads(path.read_text())
            except (OSError, ValueError):
                source = None
        if source is None:
            source = self._events.get("epoch", {})
        return {k: v for k, v in source.items() if k != "event" and isinstance(v, (int, float, str, bool))}

    def _record(self, status: JobStatus) -> None:
        path = self.output_dir / RUN_DIR / "status.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(_status_json(status), indent=2, default=str))
        os.replace(tmp, path)


def _job_exit_code(native: str, outcome: Outcome) -> int:
    """0, the failed replica's own code (128+signal when a signal ended it), 130 when cancelled, 124 on timeout."""
    if outcome.failed:
        code = outcome.exit_codes[outcome.failed]
        return code if code > 0 else 128 - code
    return {"succeeded": 0, "cancelled": 130, "timed_out": 124}.get(native, 1)


def _status_json(status: JobStatus) -> dict[str, Any]:
    return {
        "job_id": status.job_id,
        "name": status.name,
        "state": status.state.value,
        "native_state": status.native_state,
        "message": status.message,
        "created": status.created.isoformat() if status.created else None,
        "ended": status.ended.isoformat() if status.ended else None,
        "details": dict(status.details),
    }


class RecordedJob:
    """A local run seen through its ``status.json`` and log files (``attach`` / ``list_jobs``)."""

    def __init__(self, status_path: Path):
        self._path = status_path
        self.job_id = status_path.parent.parent.name

    def status(self) -> JobStatus:
        data = json.loads(self._path.read_text())
        native = data["native_state"]
        if native == "running" and not any(venv.pid_alive(pid) for pid in data["details"].get("pids", {}).values()):
            native = "failed"  # cloudtrain died without writing the end of the run
        parse = lambda s: dt.datetime.fromisoformat(s) if s else None  # noqa: E731
        return JobStatus(
            job_id=data["job_id"], name=data["name"], state=STATES[native], native_state=native,
            message=data.get("message") or ("the run ended without a summary" if native != data["native_state"] else None),
            created=parse(data.get("created")), ended=parse(data.get("ended")), details=data["details"],
        )  # fmt: skip

    def logs(self, follow: bool = False) -> Iterator[LogLine]:
        for name in self.status().details.get("replicas", []):
            log = self._path.parent / f"{name}.log"
            if log.is_file():
                stamp = dt.datetime.fromtimestamp(log.stat().st_mtime, dt.timezone.utc)
                for text in log.read_text(errors="replace").splitlines():
                    yield LogLine(stamp, name, text)

    def wait(self) -> JobStatus:
        return self.status()

    def cancel(self) -> JobStatus:
        status = self.status()
        if status.state is JobState.RUNNING:
            for pid in status.details.get("pids", {}).values():
                try:
                    os.killpg(pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
        return self.status()

