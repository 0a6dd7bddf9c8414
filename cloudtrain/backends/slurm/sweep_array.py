"""Sweeps on Slurm: a config's ``sweep:`` as one job array, Optuna's journal on the shared workdir.

``submit`` of a config with ``sweep:`` builds the package's environment as for one job, plus the sweep
tool's (Optuna of this cloudtrain's version, on the same image layer), writes the sweep's folder and
runs ``sbatch --array=0-<max_trials - 1>%<parallel_trials>``. Under ``<workdir>/runs/<sweep>/``:

- ``sweep.json``: what the nodes need to ask and tell (metric, goal, algorithm, seed, parameters);
- ``optuna.journal``: the study, shared by every array task (Optuna locks it for each write);
- ``slurm/``: the array's batch script (``array.sh``), the trial's templates (``job.template.sh``,
  ``tasks.template.json``: one job's batch script and tasks plan with the run folder and the
  swept values left as ``@RUN@`` and ``@P:name@``), ``launcher.py``, ``sweep_trial.py`` and
  ``seeding.py`` (:mod:`.sweep_trial`), the array ids (``arrays``, one a line) and their batch logs;
- ``trial-NNN/``: each trial's run folder, laid out as one job's (``slurm/r0/task-0.log`` …), so
  ``status``, ``logs`` and ``cancel`` take a trial by its Slurm id (``<array>_<task>``).

Each array task asks Optuna for its trial on the node (:mod:`.sweep_trial`), runs that trial's batch
script as one job runs, and tells Optuna the result. ``cancel SWEEP`` cancels every task (the
trials it stops stay RUNNING in the journal); ``sweep resume SWEEP`` submits a new array for what is
left: the trials a kill or a cancel interrupted, under their own numbers and parameters, then new
ones up to ``max_trials``.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import re
import shlex
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType, SimpleNamespace
from typing import Any

from cloudtrain.backends.base import HandleDefaults, JobState, JobStatus, LogLine
from cloudtrain.backends.local import venv
from cloudtrain.backends.slurm import data, script
from cloudtrain.backends.slurm.job import SlurmJob
from cloudtrain.backends.slurm.job_settings import slurm_section
from cloudtrain.backends.slurm.section import cluster_of
from cloudtrain.backends.slurm.shell import ClusterShell
from cloudtrain.errors import BackendError, UsageError
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec
from cloudtrain.sweeps import journal, results, sweep_of, trial_base
from cloudtrain.sweeps.params import resolve

HERE = Path(__file__).parent
TRIAL = HERE / "sweep_trial.py"
SEEDING = HERE.parent.parent / "sweeps" / "seeding.py"
STATE = "sweep.json"
POLL_S = 6.0  # one squeue per round: a watcher costs the controller 10 calls a minute
#: Filesystems that a cluster's nodes share (``stat -f -c %T``).
SHARED_FS = re.compile(r"^(nfs\d?|lustre|gpfs|beegfs|cifs|smb2?|ceph|glusterfs|panfs|wekafs|fuse.*|9p|virtiofs)$")
_TRIAL_ID = re.compile(r"^(?P<array>\d+)_(?P<task>\d+)$")


def sweep_index(workdir: str, job_id: str) -> str:
    """The file naming a sweep's folder by its first array's id (``status``/``cancel`` by id)."""
    return f"{workdir.rstrip('/')}/sweeps/{job_id}"


def optuna_version() -> str:
    return importlib.metadata.version("optuna")


# --- where the workdir is ------------------------------------------------------------------


def unshared_reason(fs_type: str, node_hosts: list[str], login_names: set[str]) -> str | None:
    """Why the nodes cannot share the sweep's journal, or None: the workdir is on a network filesystem,
    or every node of the partition is the machine the workdir is on (a one-machine cluster)."""
    if SHARED_FS.match(fs_type.strip().lower()):
        return None
    if node_hosts and all(host in login_names for host in node_hosts):
        return None
    return f"it is on a {fs_type.strip() or 'local'} filesystem of the login machine, which the nodes do not see"


def check_shared(shell: ClusterShell, workdir: str, partition: str | None) -> None:
    """Refuse a sweep whose workdir the nodes do not share, in one line (exit 2)."""
    shell.run(["mkdir", "-p", workdir])
    fs_type = shell.text(["stat", "-f", "-c", "%T", workdir], check=False)
    sinfo = ["sinfo", "-h", "-N", "-o", "%N"] + (["-p", partition] if partition else [])
    nodes = sorted(set(shell.text(sinfo, check=False).split()))
    hosts = []
    for node in nodes:
        words = shell.text(["scontrol", "show", "node", "-o", node], check=False).split()
        fields = dict(w.split("=", 1) for w in words if "=" in w)
        hosts.append(fields.get("NodeAddr", node))
    names = set(shell.text(["sh", "-c", "hostname; hostname -s; hostname -I 2>/dev/null"], check=False).split())
    why = unshared_reason(fs_type, hosts, names | {"127.0.0.1", "localhost", "::1"})
    if why is not None:
        raise UsageError(
            f"slurm.workdir {workdir}: a sweep's trials share one Optuna journal there, but {why}",
            "set slurm.workdir to a shared filesystem (NFS, Lustre, GPFS …) that every node mounts",
        )


# --- submit ----------------------------------------------------------------------------------


def template_spec(spec: JobSpec) -> JobSpec:
    """One trial's job with the run folder, its name and the swept values as placeholders (filled on the node)."""
    base = trial_base(spec)
    swept = {name: f"@P:{name}@" for name in sweep_of(spec).params}
    return dataclasses.replace(
        base,
        job_name="@JOB@",
        output_dir="@RUN@",
        hyperparameters=MappingProxyType({**base.hyperparameters, **swept}),
    )


def state_of(spec: JobSpec, workdir: str) -> dict[str, Any]:
    sweep = sweep_of(spec)
    params = resolve(sweep.params, sweep.algorithm)
    return {
        "job_name": spec.job_name,
        "workdir": workdir,
        "metric": sweep.metric,
        "goal": sweep.goal,
        "max_trials": sweep.max_trials,
        "parallel_trials": sweep.parallel_trials,
        "max_failed_trials": sweep.max_failed_trials,
        "algorithm": sweep.algorithm,
        "seed": sweep.seed,
        "params": [dataclasses.asdict(p) for p in params],
        "optuna": optuna_version(),
    }


def array_script(spec: JobSpec, folder: str, tool: str) -> str:
    """The batch script of every array task: ask for a trial, run its job, tell the result."""
    q = shlex.quote
    as_sweep = dataclasses.replace(spec, output_dir=folder)
    options = [o for o in script.sbatch_options(as_sweep) if not o.startswith("--output=")]
    options.append(f"--output={folder}/slurm/batch-%A_%a.log")
    header = "\n".join(f"#SBATCH {option}" for option in options)
    trial = f"{folder}/slurm/sweep_trial.py"
    return f"""#!/bin/bash
# {spec.job_name}: a sweep's trials as a job array, written by cloudtrain from {spec.config_file.name}
{header}
set -u
export PATH={script.BASE_PATH}
SWEEP={q(folder)}
if [ ! -e "$SWEEP/{STATE}" ]; then
  echo "cloudtrain: $SWEEP is not on node $(hostname): slurm.workdir must be a filesystem every node sees" >&2
  exit 2
fi
RUN=$({q(tool)} {q(trial)} ask "$SWEEP" "${{1:-}}") || exit 3
echo "cloudtrain: array task ${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}} runs $RUN"
bash "$RUN/slurm/job.sh" >> "$RUN/slurm/batch-$SLURM_JOB_ID.log" 2>&1 &
child=$!
stopped=""
trap 'kill -USR1 $child 2>/dev/null' USR1
trap 'stopped=TERM; kill -TERM $child 2>/dev/null' TERM
while :; do
  wait "$child"
  rc=$?
  kill -0 "$child" 2>/dev/null || break
done
{q(tool)} {q(trial)} tell "$SWEEP" "$RUN" "$rc" "$stopped"
exit "$rc"
"""


def tool_python(spec: JobSpec, image: Any) -> str:
    """Where the sweep tool's environment (Optuna on the job's image layer) is on the cluster."""
    return str(venv.env_python(venv.install_dir(f"optuna=={optuna_version()}", image, Path(script.workdir(spec)))))


def render(request: dict[str, Any], spec: JobSpec, image: Any, python: str) -> dict[str, Any]:
    """The dry run of a sweep: the array's batch script and ``sbatch --array``; one trial's job as ``trial``."""
    sweep, folder = sweep_of(spec), spec.output_dir.rstrip("/")
    trial = template_spec(spec)
    command = SlurmSweep.sbatch_command(folder, 0, sweep.max_trials, sweep.parallel_trials, [])
    commands = [c for c in request["commands"] if not c.startswith(("write ", "sbatch "))]
    return {
        **request,
        "commands": [
            *commands,
            f"build the sweep tool's environment {Path(tool_python(spec, image)).parent.parent} once "
            f"(optuna=={optuna_version()}, unless it is there)",
            f"write {folder}/sweep.json, slurm/array.sh, slurm/job.template.sh, slurm/tasks.template.json",
            shlex.join(command),
        ],
        "trial_batch_script": script.batch_script(trial, script.Paths.of(trial, python)),
        "batch_script": array_script(spec, folder, tool_python(spec, image)),
    }


@dataclass(frozen=True)
class JobParts:
    """What the backend gives a sweep of the making of one job (this module sits below it)."""

    backend: Any  # its _image(spec) and _build_remotely(shell, spec, package, image)
    tasks_plan: Callable[[JobSpec, BuiltPackage, str, dict[str, str]], dict[str, Any]]
    package_path: Callable[[JobSpec, BuiltPackage], str]
    launcher: Path
    envbuild: Path


def submit(parts: JobParts, spec: JobSpec, package: BuiltPackage, log: Callable[[str], None]) -> SlurmSweep:
    """Build the environments, write the sweep's folder, ``sbatch --array``; the sweep's handle."""
    backend, tasks_plan, package_path = parts.backend, parts.tasks_plan, parts.package_path
    section = slurm_section(spec)
    shell, workdir = ClusterShell(section.login), script.workdir(spec)
    check_shared(shell, workdir, section.partition)
    if not shell.remote:
        Path(package_path(spec, package)).parent.mkdir(parents=True, exist_ok=True)
    shell.copy_once(package.path, package_path(spec, package))
    image, gpu = backend._image(spec)
    if image.note:
        log(image.note)
    if gpu.with_cuda:
        log(f"GPU environment: {gpu.line}")
    requirement = f"optuna=={optuna_version()}"
    if shell.remote:
        python = backend._build_remotely(shell, spec, package, image)
        tool = build_tool_remotely(shell, spec, image, requirement, parts.envbuild)
    else:
        root = Path(workdir)
        python = str(venv.ensure_env(package, image, root=root, log=log).python)
        label = f"the sweep tool ({requirement})"
        tool = str(venv.ensure_install([requirement], image, key=requirement, label=label, root=root, log=log).python)
    channels = data.place(spec, shell, section.python, log)
    folder = spec.output_dir.rstrip("/")
    trial = template_spec(spec)
    paths = script.Paths.of(trial, python)
    files = {
        STATE: (json.dumps(state_of(spec, workdir), indent=2), 0o644),
        "slurm/job.template.sh": (script.batch_script(trial, paths), 0o644),
        "slurm/tasks.template.json": (json.dumps(tasks_plan(trial, package, python, channels), indent=2), 0o600),
        "slurm/launcher.py": (parts.launcher.read_text(), 0o644),
        "slurm/sweep_trial.py": (TRIAL.read_text(), 0o644),
        "slurm/seeding.py": (SEEDING.read_text(), 0o644),
        "slurm/array.sh": (array_script(spec, folder, tool), 0o755),
    }
    for name, (text, mode) in files.items():
        shell.write(f"{folder}/{name}", text.encode(), mode)
    sweep = SlurmSweep(shell, "", folder, cluster=spec.region, workdir=workdir)
    array = sweep.submit_array(0, sweep_of(spec).max_trials, sweep_of(spec).parallel_trials, [])
    shell.write(sweep_index(workdir, array), folder.encode(), 0o644)
    sweep.job_id = array
    return sweep


def build_tool_remotely(shell: ClusterShell, spec: JobSpec, image: Any, requirement: str, envbuild: Path) -> str:
    """The sweep tool's environment on the login node (:mod:`.envbuild`), where the local builder would put it."""
    section, root = slurm_section(spec), Path(script.workdir(spec))
    env = venv.install_dir(requirement, image, root)
    request = {
        "python": section.python if section.python != "python3" else image.python.path,
        "image_dir": str(venv.image_dir(image, root)),
        "image_key": image.key,
        "image_packages": list(image.packages),
        "pkg_dir": str(env),
        "pkg_key": requirement,
        "sdist": requirement,
    }
    builder = f"{script.workdir(spec)}/cloudtrain/envbuild.py"
    shell.write(builder, envbuild.read_bytes(), 0o644)
    result = shell.run([section.python, builder, json.dumps(request)], check=False, timeout=3600)
    if result.returncode != 0:
        why = (result.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise BackendError(
            f"cannot build the sweep tool's environment ({requirement}) on {section.login}: {why}",
            "check that the login node reaches the package index",
        )
    return str(venv.env_python(env))


# --- the handle -------------------------------------------------------------------------------


def attach(shell: ClusterShell, job_id: str, cluster: str, workdir: str) -> SlurmSweep | None:
    """The sweep whose first array is ``job_id``, or None when it is no sweep's."""
    found = shell.run(["cat", sweep_index(workdir, job_id)], check=False)
    if found.returncode != 0:
        return None
    return SlurmSweep(shell, job_id, found.stdout.decode().strip(), cluster=cluster, workdir=workdir)


def trial_location(text: str, find: Callable[[str], Any]) -> tuple[str, dict[str, str]] | None:
    """``<array>_<task>`` of a sweep in this machine's history: the trial's id and where its sweep is."""
    match = _TRIAL_ID.match(text)
    entry = find(match["array"]) if match else None
    if entry is None or entry.backend != "slurm" or getattr(entry, "kind", "job") != "sweep":
        return None
    return text, {"region": entry.region, "project": entry.project or ""}


class SlurmSweep(HandleDefaults):
    """A sweep's arrays: its state from ``squeue`` and the journal, its trials' lines, cancel, resume."""

    backend_name = "slurm"
    shows_trials = True  # ``logs(follow=True)`` gives the trials' lines, each labelled by its trial

    def __init__(
        self,
        shell: ClusterShell,
        job_id: str,
        folder: str,
        *,
        cluster: str,
        workdir: str,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.job_id, self.folder, self.region, self.project = job_id, folder, cluster, workdir
        self._shell, self._sleep = shell, sleep
        self._state: dict[str, Any] | None = None

    @property
    def location(self) -> dict[str, str]:
        return {"region": self.region, "project": self.project}

    def state(self) -> dict[str, Any]:
        if self._state is None:
            found = self._shell.run(["cat", f"{self.folder}/{STATE}"], check=False)
            if found.returncode != 0:
                raise UsageError(
                    f"{self.folder} on {self.region} holds no sweep", "check the sweep id (cloudtrain list)"
                )
            self._state = json.loads(found.stdout.decode())
        return self._state

    def arrays(self) -> list[str]:
        found = self._shell.run(["cat", f"{self.folder}/slurm/arrays"], check=False)
        return found.stdout.decode().split() if found.returncode == 0 else []

    @staticmethod
    def sbatch_command(folder: str, first: int, count: int, parallel: int, rerun: list[int]) -> list[str]:
        """``sbatch --array`` of ``count`` trials, at most ``parallel`` at once; the tasks take ``rerun`` first."""
        return [
            "sbatch",
            "--parsable",
            "--export=NONE",
            f"--array={first}-{first + count - 1}%{max(1, min(parallel, count))}",
            f"{folder}/slurm/array.sh",
            *([",".join(str(n) for n in rerun)] if rerun else []),
        ]

    def submit_array(self, first: int, count: int, parallel: int, rerun: list[int]) -> str:
        """Submit an array (:meth:`sbatch_command`), record its id in ``slurm/arrays``; its id."""
        result = self._shell.run(self.sbatch_command(self.folder, first, count, parallel, rerun), check=False)
        if result.returncode != 0:
            why = (result.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
            raise BackendError(f"sbatch failed: {why.removeprefix('sbatch: error: ')}")
        array = result.stdout.decode().strip().split(";")[0]
        arrays = [*self.arrays(), array]
        self._shell.write(f"{self.folder}/slurm/arrays", ("\n".join(arrays) + "\n").encode(), 0o644)
        return array

    # --- state ---------------------------------------------------------------------------------

    def _tasks(self) -> list[tuple[str, str]]:
        """(task id, Slurm state) of the tasks the controller still holds, of every array."""
        arrays = self.arrays()
        if not arrays:
            return []
        out = self._shell.run(["squeue", "-h", "-r", "-j", ",".join(arrays), "-o", "%i|%T"], check=False)
        rows = [line.split("|", 1) for line in out.stdout.decode(errors="replace").splitlines() if "|" in line]
        return [(task, native) for task, native in rows]

    def trials(self) -> list[Any] | None:
        """The study's trials (Optuna's FrozenTrial), replayed from a copy of the journal; None before the
        first trial asked. The journal is checked first (:func:`journal.damage`): a damaged one is one line."""
        import optuna
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend

        remote = f"{self.folder}/{journal.NAME}"
        found = self._shell.run(["cat", remote], check=False)
        if found.returncode != 0 or not found.stdout:
            return None
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        with tempfile.TemporaryDirectory(prefix="cloudtrain-sweep-") as tmp:
            path = Path(tmp) / journal.NAME
            path.write_bytes(found.stdout)
            damage = journal.damage(path)
            if damage is not None:
                raise dataclasses.replace(damage, path=Path(remote)).error()
            try:
                storage = JournalStorage(JournalFileBackend(str(path)))
                study = optuna.load_study(study_name=self.state()["job_name"], storage=storage)
                return list(study.get_trials(deepcopy=False))
            except Exception as exc:
                raise journal.replay_failed(Path(remote), exc).error() from None

    def status(self) -> JobStatus:
        tasks = self._tasks()
        name = f"{self.region}:{self.folder}"
        if tasks:
            running = any(native in ("RUNNING", "COMPLETING", "CONFIGURING") for _, native in tasks)
            state = JobState.RUNNING if running else JobState.PENDING
            return JobStatus(self.job_id, name, state, "ARRAY " + ("RUNNING" if running else "PENDING"), None)
        table = self.results(terminal=True)
        return JobStatus(self.job_id, name, *self._outcome(table))

    def _outcome(self, table: results.SweepResults) -> tuple[JobState, str, str | None]:
        counted = sum(n for s, n in table.counts().items() if s in ("COMPLETE", "PRUNED", "FAIL"))
        left = (table.max_trials or 0) - counted
        if table.state == "CANCELLED":
            return (
                JobState.CANCELLED,
                "CANCELLED",
                f"cancelled with {left} trials to run: cloudtrain sweep resume {self.job_id}",
            )
        if left > 0:
            return (
                JobState.FAILED,
                "STOPPED",
                f"{left} of {table.max_trials} trials did not finish: cloudtrain sweep resume {self.job_id}",
            )
        if table.best is None:
            return JobState.FAILED, "FAILED", f"no trial reported {table.metric!r}"
        return JobState.SUCCEEDED, "SUCCEEDED", None

    def results(self, terminal: bool | None = None) -> results.SweepResults:
        state = self.state()
        alive = bool(self._tasks()) if terminal is None else not terminal
        trials = self.trials()
        cancelled = self._shell.run(["test", "-e", f"{self.folder}/slurm/cancel-requested"], check=False)
        word = "RUNNING" if alive else ("CANCELLED" if cancelled.returncode == 0 else "DONE")
        if trials is None:
            return results.SweepResults(
                self.job_id, state["metric"], state["goal"], word if alive else "STOPPED", (), state["max_trials"]
            )
        study = SimpleNamespace(trials=trials)
        table = results.from_study(self.job_id, study, state["metric"], state["goal"], state["max_trials"], word)
        if word == "DONE":
            counted = sum(n for s, n in table.counts().items() if s in ("COMPLETE", "PRUNED", "FAIL"))
            table = dataclasses.replace(table, state="SUCCEEDED" if counted >= state["max_trials"] else "STOPPED")
        if not alive:  # a trial left RUNNING by a kill or a cancel is interrupted: resume runs it again
            rows = tuple(
                dataclasses.replace(t, state="INTERRUPTED") if t.state == "RUNNING" else t for t in table.trials
            )
            table = dataclasses.replace(table, trials=rows)
        return table

    def wait(self) -> JobStatus:
        while not (status := self.status()).state.terminal:
            self._sleep(POLL_S)
        return status

    def cancel(self) -> JobStatus:
        """Every task of every array: the trials it stops stay RUNNING in the journal (resume reruns them)."""
        self._shell.write(f"{self.folder}/slurm/cancel-requested", b"", 0o644)
        arrays = self.arrays()
        if arrays:
            self._shell.run(["scancel", *arrays], check=False)
        deadline = time.monotonic() + 60
        while self._tasks() and time.monotonic() < deadline:
            self._sleep(1.0)
        return self.status()

    def resume(self) -> SlurmSweep:
        """A new array for what is left: interrupted trials first (their own numbers), then new ones."""
        from optuna.trial import TrialState

        if self._tasks():
            raise UsageError(
                f"sweep {self.job_id} is running (array {self.arrays()[-1]}); two arrays must not run one sweep",
                f"wait for it, or stop it first: cloudtrain cancel {self.job_id}",
            )
        state = self.state()
        trials = self.trials() or []
        counted = sum(1 for t in trials if t.state in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL))
        left = state["max_trials"] - counted
        if left <= 0:
            raise UsageError(
                f"sweep {self.job_id} has run all its {state['max_trials']} trials",
                f"see cloudtrain sweep results {self.job_id}",
            )
        rerun = [t.number for t in trials if t.state is TrialState.RUNNING][:left]
        self._shell.run(["rm", "-f", f"{self.folder}/slurm/cancel-requested"], check=False)
        self.submit_array(0, left, state["parallel_trials"], rerun)
        return self

    # --- lines ---------------------------------------------------------------------------------

    def logs(self, follow: bool = False, drain: float | None = None) -> Iterator[LogLine]:
        """Each trial's lines (its batch shell's and its tasks'), labelled ``tNNN/<node>/task-T``, a trial
        after another; with ``follow``, each trial's once it ended, until the sweep did."""
        shown: set[str] = set()
        while True:
            alive = {task for task, _ in self._tasks()} if follow else set()  # one squeue a round
            for number, job_id, run in self._trial_runs():
                if run in shown or job_id in alive:
                    continue
                shown.add(run)
                job = SlurmJob(self._shell, job_id, run, cluster=self.region, workdir=self.project)
                for line in job.logs(follow=False):
                    yield LogLine(line.timestamp, f"t{number:03d}/{line.replica}", line.message, line.severity)
            if not alive:
                return
            self._sleep(POLL_S)

    def _trial_runs(self) -> list[tuple[int, str, str]]:
        return [
            (t.number, t.user_attrs["job_id"], t.user_attrs["output_dir"])
            for t in self.trials() or []
            if t.user_attrs.get("job_id") and t.user_attrs.get("output_dir")
        ]


def cluster_shell(region: str | None) -> tuple[ClusterShell, str]:
    region = region or cluster_of("")
    return ClusterShell("" if region == cluster_of("") else region), region
