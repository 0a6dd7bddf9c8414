"""The batch script ``sbatch`` gets: a pure function of the spec and the paths on the cluster.

What it does on the first node of the allocation:

- one task per node (``srun``), each running the launcher (:mod:`.launcher`) under the
  node's ``setup:`` lines; the tasks' output goes to ``<run>/slurm/r<RESTART>/task-<T>.log``,
  new files after every requeue (``SLURM_RESTART_COUNT``);
- ``--signal=B:USR1@<grace>``: only this shell gets the warning, so it sends SIGTERM to the
  tasks through ``scancel --signal=TERM JOB.0`` (the one step; srun itself would take SIGTERM as
  "terminate the step" and kill them) — the trainer saves a checkpoint, as on a spot VM — waits for them, and with
  ``slurm.requeue`` runs ``scontrol requeue`` (``--requeue`` alone never requeues at a time
  limit); without it the job ends with exit status 124, the time limit's;
- the tasks' exit statuses and times are written by the launcher, the shell's own status in
  ``batch.exit``: the outcome survives a controller that forgot the job (``MinJobAge``) on a
  cluster without accounting.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from cloudtrain.backends.slurm.job_settings import slurm_section
from cloudtrain.backends.slurm.timing import slurm_time, time_limit
from cloudtrain.spec import JobSpec

TIMEOUT_EXIT = 124  # what the batch shell exits with when it stopped the tasks for the time-limit warning
#: A clean environment for the batch shell (``--export=NONE``): the cluster's tools and the job's Python.
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def workdir(spec: JobSpec) -> str:
    """``slurm.workdir`` without a trailing slash: packages, environments, data and runs go under it
    (history records it as the job's project)."""
    return str(slurm_section(spec).workdir).rstrip("/")


@dataclass(frozen=True)
class Paths:
    """Where things are on the cluster (all under ``slurm.workdir``)."""

    run: str  # the run's folder: spec.output_dir
    python: str  # the job environment's interpreter
    launcher: str  # the launcher script
    tasks: str  # the tasks' plan (tasks.json)

    @classmethod
    def of(cls, spec: JobSpec, python: str) -> Paths:
        run = spec.output_dir.rstrip("/")
        return cls(run, python, f"{run}/slurm/launcher.py", f"{run}/slurm/tasks.json")


def sbatch_options(spec: JobSpec) -> list[str]:
    """The ``#SBATCH`` options, in the order they are written."""
    s = slurm_section(spec)
    seconds = time_limit(spec.max_runtime_seconds, spec.budget_gpu_hours, spec.gpus_total)
    run = spec.output_dir.rstrip("/")
    options = [f"--job-name={spec.job_name}"]
    if s.partition:
        options.append(f"--partition={s.partition}")
    options += [f"--nodes={spec.replica_count}", "--ntasks-per-node=1"]
    if spec.machine.accelerator_count:
        options.append(f"--gpus-per-node={spec.machine.accelerator_count}")
    options += [
        f"--time={slurm_time(seconds)}",
        f"--signal=B:USR1@{s.grace}",
        f"--output={run}/slurm/batch-%j.log",
        "--open-mode=append",
        "--requeue" if s.requeue else "--no-requeue",
        "--export=NONE",
    ]
    for key in ("account", "qos", "constraint"):
        if getattr(s, key):
            options.append(f"--{key}={getattr(s, key)}")
    if s.exclusive:
        options.append("--exclusive")
    return options + [line.strip() for line in s.sbatch]


def batch_script(spec: JobSpec, paths: Paths) -> str:
    """The exact text ``sbatch`` reads."""
    q = shlex.quote
    s = slurm_section(spec)
    header = "\n".join(f"#SBATCH {option}" for option in sbatch_options(spec))
    setup = "".join(f"{line}\n" for line in s.setup)
    task = f'set -e\n{setup}exec "$0" "$@"'
    python_bin = paths.python.rsplit("/", 1)[0]
    return f"""#!/bin/bash
# {spec.job_name}: written by cloudtrain from {spec.config_file.name}
{header}
set -u
RUN={q(paths.run)}
restart=${{SLURM_RESTART_COUNT:-0}}
out="$RUN/slurm/r$restart"
mkdir -p "$out"
export PATH={q(python_bin)}:{BASE_PATH}
export PYTHONUNBUFFERED=1
echo "cloudtrain: job $SLURM_JOB_ID (restart $restart) on $SLURM_JOB_NODELIST"
warned=""
warn() {{
  warned=$1
  echo "cloudtrain: $1 received: the tasks save a checkpoint and stop"
  date +%s > "$out/warned"
  # a signal to the step, not to srun: srun takes SIGTERM as "terminate the step now"
  scancel --signal=TERM "$SLURM_JOB_ID.0" 2>/dev/null
}}
trap 'warn USR1' USR1
trap 'warn TERM' TERM
srun --export=ALL --kill-on-bad-exit=0 --output="$out/task-%t.log" \\
  bash -c {q(task)} {q(paths.python)} {q(paths.launcher)} {q(paths.tasks)} &
step=$!
while :; do
  wait "$step"
  rc=$?
  kill -0 "$step" 2>/dev/null || break
done
echo "$rc" > "$out/batch.exit"
if [ "$warned" = USR1 ]; then
  if [ {1 if s.requeue else 0} = 1 ] && [ ! -e "$RUN/slurm/cancel-requested" ]; then
    echo "cloudtrain: requeued; the next run resumes from the checkpoint"
    touch "$out/requeued"
    scontrol requeue "$SLURM_JOB_ID"
    exit 0
  fi
  echo {TIMEOUT_EXIT} > "$out/batch.exit"
  exit {TIMEOUT_EXIT}
fi
exit "$rc"
"""


def sbatch_command(paths: Paths) -> list[str]:
    """How the script is submitted: the job id alone on stdout, and no environment from this shell."""
    return ["sbatch", "--parsable", "--export=NONE", f"{paths.run}/slurm/job.sh"]
