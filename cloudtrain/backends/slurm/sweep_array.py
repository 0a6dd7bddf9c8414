"""Sweeps on Slurm: a config's ``sweep:`` as one job array, Optuna's journal on the shared workdir.

``submit`` builds the job's environment plus the sweep tool's (Optuna of this cloudtrain's version, same image
layer), writes ``<workdir>/runs/<sweep>/`` and runs ``sbatch --array=0-<max_trials - 1>%<parallel_trials>``. The
folder holds ``sweep.json`` (what the nodes need to ask and tell), ``optuna.journal``, ``slurm/`` (``array.sh``, the
trial templates with ``@RUN@`` and ``@P:name@`` left open, ``launcher.py``, ``sweep_trial.py``, ``seeding.py``, the
array ids in ``arrays`` and the batch logs) and ``trial-NNN/``, each laid out as one job's run folder so commands
take a trial by its Slurm id (``<array>_<task>``). Each task asks Optuna for its trial (:mod:`.sweep_trial`), runs
it as one job runs, and tells the result. ``cancel SWEEP`` cancels every task (stopped trials stay RUNNING);
``sweep resume SWEEP`` submits a new array for the interrupted trials (own numbers and parameters), then new ones."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cloudtrain.backends.runner import env_keys, venv
from cloudtrain.backends.slurm import job_secrets, script, tasks, transfer
from cloudtrain.backends.slurm.job_settings import slurm_section
from cloudtrain.backends.slurm.shell import ClusterShell
from cloudtrain.backends.slurm.sweep_handle import STATE, SlurmSweep, sbatch_command
from cloudtrain.errors import UsageError
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec
from cloudtrain.sweeps import sweep_of, trial_base
from cloudtrain.sweeps.params import resolve

HERE = Path(__file__).parent
TRIAL = HERE / "sweep_trial.py"
SEEDING = HERE.parent.parent / "sweeps" / "seeding.py"
#: Filesystems that a cluster's nodes share (``stat -f -c %T``).
SHARED_FS = re.compile(r"^(nfs\d?|lustre|gpfs|beegfs|cifs|smb2?|ceph|glusterfs|panfs|wekafs|fuse.*|9p|virtiofs)$")


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
    """One trial's job with the run folder, its name and the swept values as placeholders (filled on the node);
    the values appended to the args as ``--name=value``, a module's and a script's alike (as on every backend)."""
    base = trial_base(spec)
    swept = tuple(f"--{name}=@P:{name}@" for name in sweep_of(spec).params)
    return dataclasses.replace(base, job_name="@JOB@", output_dir="@RUN@", args=base.args + swept)


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
    options.append(script.option("--output", f"{script.filename(folder)}/slurm/batch-%A_%a.log"))
    header = "\n".join(f"#SBATCH {option}" for option in options)
    trial = f"{folder}/slurm/sweep_trial.py"
    written = f"{spec.job_name}: a sweep's trials as a job array, written by cloudtrain from {spec.config_file.name}"
    return f"""#!/bin/bash
{script.comment(written)}
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


def tool_env(image: Any, root: Path) -> Path:
    """The sweep tool's environment (Optuna on the job's image layer): a requirements layer of the local
    builder's (:func:`~cloudtrain.backends.runner.venv.ensure_requirements`), wherever it is built."""
    requirement = f"optuna=={optuna_version()}"
    return env_keys.deps_dir(env_keys.requirements_key([requirement], image, env_keys.index_settings()), root)


def tool_python(spec: JobSpec, image: Any) -> str:
    """Where the sweep tool's environment is on the cluster."""
    return str(env_keys.env_python(tool_env(image, Path(script.workdir(spec)))))


def render(request: dict[str, Any], spec: JobSpec, image: Any, python: str) -> dict[str, Any]:
    """The dry run of a sweep: the array's batch script and ``sbatch --array``; one trial's job as ``trial``."""
    sweep, folder = sweep_of(spec), spec.output_dir.rstrip("/")
    trial = template_spec(spec)
    command = sbatch_command(folder, 0, sweep.max_trials, sweep.parallel_trials, [])
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


def submit(cluster: Any, spec: JobSpec, package: BuiltPackage, log: Callable[[str], None]) -> SlurmSweep:
    """Build the environments, write the sweep's folder, ``sbatch --array``; the sweep's handle (``cluster``:
    the backend's :class:`~.cluster.OnCluster`, its image layer, early refusals and remote builds)."""
    section = slurm_section(spec)
    shell, workdir = ClusterShell(section.login), script.workdir(spec)
    secret_values = job_secrets.resolve(spec, shell)  # shell: references, where sbatch runs (first: fail early)
    check_shared(shell, workdir, section.partition)
    cluster._refuse_early(shell, spec, array_script(spec, spec.output_dir.rstrip("/"), section.python))
    if not shell.remote:
        Path(script.package_path(spec, package)).parent.mkdir(parents=True, exist_ok=True)
    shell.copy_once(package.path, script.package_path(spec, package))
    image, gpu = cluster.built_image(spec)
    if image.note:
        log(image.note)
    if gpu.with_cuda:
        log(f"GPU environment: {gpu.line}")
    requirement = f"optuna=={optuna_version()}"
    if shell.remote:
        env = (env_keys.env_dir(package, image, Path(workdir)), package.sha256, script.package_path(spec, package))
        python = cluster._build_remotely(shell, spec, image, env, "the job environment")
        tool_dir = tool_env(image, Path(workdir))
        tool_spec = (tool_dir, tool_dir.name.removeprefix("deps-"), requirement)
        tool = cluster._build_remotely(shell, spec, image, tool_spec, f"the sweep tool's environment ({requirement})")
    else:
        root = Path(workdir)
        python = str(venv.ensure_env(package, image, root=root, log=log).python)
        label = f"the sweep tool ({requirement})"
        tool = str(venv.ensure_requirements([requirement], image, label=label, root=root, log=log).python)
    channels = transfer.place(spec, shell, section.python, log)
    folder = spec.output_dir.rstrip("/")
    trial = template_spec(spec)
    paths = script.Paths.of(trial, python)
    plan = tasks.tasks_plan(trial, package, python, channels)
    if job_secrets.needs_file(spec):  # one 0600 file every trial's tasks read (each trial links it for its mask)
        job_secrets.write(spec, shell, folder, secret_values)
        plan["secrets"] = job_secrets.secrets_path(folder)  # the path only: the values stay in that file
    files = {
        STATE: (json.dumps(state_of(spec, workdir), indent=2), 0o644),
        "slurm/job.template.sh": (script.batch_script(trial, paths), 0o644),
        "slurm/tasks.template.json": (json.dumps(plan, indent=2), 0o600),
        "slurm/launcher.py": (script.LAUNCHER.read_text(), 0o644),
        "slurm/sweep_trial.py": (TRIAL.read_text(), 0o644),
        "slurm/seeding.py": (SEEDING.read_text(), 0o644),
        "slurm/array.sh": (array_script(spec, folder, tool), 0o755),
    }
    for name, (text, mode) in files.items():
        shell.write(f"{folder}/{name}", text.encode(), mode)
    sweep = SlurmSweep(shell, "", folder, cluster=spec.region, workdir=workdir)
    sweep.job_id = sweep.submit_array(0, sweep_of(spec).max_trials, sweep_of(spec).parallel_trials, [])
    return sweep
