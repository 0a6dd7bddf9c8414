"""The batch script ``sbatch`` gets: a pure function of the spec and the paths on the cluster.

On the allocation's first node it runs one ``srun`` task per node, each the launcher (:mod:`.launcher`) under the
node's ``setup:`` lines, output in ``<run>/slurm/r<RESTART>/task-<T>.log`` (new files after every requeue). With
``--signal=B:USR1@<grace>`` only this shell is warned; it sends SIGTERM to the tasks through ``scancel
--signal=TERM JOB.0`` (srun would take SIGTERM as "kill the step") so the trainer checkpoints, waits, and with
``slurm.requeue`` runs ``scontrol requeue`` (``--requeue`` alone never requeues at a time limit); otherwise the job
ends with 124. The launcher writes the tasks' statuses and the shell writes ``batch.exit``, so the outcome survives a
controller that forgot the job on a cluster without accounting."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cloudtrain.backends.slurm.job_settings import TIMEOUT_EXIT, gpu_type, slurm_section, slurm_time, time_limit
from cloudtrain.errors import UsageError
from cloudtrain.packaging import BuiltPackage
from cloudtrain.secrets.masking import secret_names
from cloudtrain.spec import JobSpec

#: A clean environment for the batch shell (``--export=NONE``): the cluster's tools and the job's Python.
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LAUNCHER = Path(__file__).parent / "launcher.py"
ENVBUILD = Path(__file__).parent / "envbuild.py"


# --- one function per place a value is written on the cluster (``#SBATCH`` directive, comment, shell word), each
# quoting where it writes. They refuse control characters again after the config checks, for specs built otherwise.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: What sbatch's script parser reads as syntax: blanks split arguments, quotes and ``\`` quote, ``#`` starts a comment.
_SBATCH_SPECIAL = re.compile(r"[\s\"'\\#]")


def one_line(value: str, what: str) -> str:
    """``value``, refused if it holds a control character (a newline would end the line it is written on)."""
    if _CONTROL.search(value):
        raise UsageError(f"{what} {value!r} holds a control character", "remove it (newline, tab, …)")
    return value


def option(name: str, value: object) -> str:
    """``--name=value`` as an ``#SBATCH`` line's argument that sbatch reads back as exactly ``value``."""
    text = one_line(str(value), name)
    if _SBATCH_SPECIAL.search(text):
        text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{name}={text}"


def filename(path: str) -> str:
    """A literal path in a Slurm filename pattern (``--output``): its own ``%`` doubled."""
    return path.replace("%", "%%")


def comment(text: str) -> str:
    """A ``#`` comment line."""
    return "# " + one_line(text, "a comment")


def sbatch_arguments(line: str) -> list[str]:
    """The arguments sbatch reads from one ``#SBATCH`` line (``_get_argument`` of its opt.c): split at blanks, quotes
    and ``\\`` honoured, a blank ends an argument even after a ``\\``; an unquoted ``#`` and an argument of no
    character (``''``) end the line. ValueError: an unclosed quote, which sbatch refuses."""
    args: list[str] = []
    word, quote, escaped, inside = "", "", False, False
    for ch in line + " ":  # the blank ends the last argument
        if not quote and (ch.isspace() or ch == "#" and not escaped):
            if ch == "#" or inside and not word:  # where sbatch stops reading the line
                return [*args, word] if word else args
            if inside:
                args.append(word)
            word, escaped, inside = "", False, False
        elif escaped:  # inside already: the backslash began it
            word, escaped = word + ch, False
        elif ch == "\\":
            escaped = inside = True
        elif ch == quote or not quote and ch in "\"'":
            quote, inside = "" if quote else ch, True
        else:
            word, inside = word + ch, True
    if quote:
        raise ValueError(f"an unclosed {quote}")
    return args


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


def tasks_per_node(spec: JobSpec) -> int:
    """Tasks on each node: 1, or one per GPU with ``slurm.tasks_per_node: gpus``."""
    per_gpu = slurm_section(spec).tasks_per_node == "gpus" and spec.machine.accelerator_count > 0
    return spec.machine.accelerator_count if per_gpu else 1


def sbatch_options(spec: JobSpec) -> list[str]:
    """The ``#SBATCH`` options, in the order they are written, each value as sbatch reads it back
    (:func:`option`); ``slurm.sbatch``'s lines as written (checked as sbatch parses them)."""
    s = slurm_section(spec)
    gpu = gpu_type(spec)
    seconds = time_limit(spec.max_runtime_seconds, spec.budget_gpu_hours, spec.gpus_total)
    gpus = spec.machine.accelerator_count
    per_node = tasks_per_node(spec)
    values: list[tuple[str, object]] = [("--job-name", spec.job_name), ("--partition", s.partition)]
    values += [("--nodes", spec.replica_count), ("--ntasks-per-node", per_node)]
    if gpus and per_node > 1:  # one task per GPU: Slurm gives each its own CUDA_VISIBLE_DEVICES
        values.append(("--gpus-per-task", f"{gpu}:1" if gpu else 1))
    elif gpus and gpu:
        values.append(("--gres", f"gpu:{gpu}:{gpus}"))  # the GPU type the cluster names
    elif gpus:
        values.append(("--gpus-per-node", gpus))
    values += [
        ("--time", slurm_time(seconds)),
        ("--signal", f"B:USR1@{s.grace}"),
        ("--output", f"{filename(spec.output_dir.rstrip('/'))}/slurm/batch-%j.log"),
        ("--open-mode", "append"),
    ]
    options = [option(name, value) for name, value in values if value]
    options += ["--requeue" if s.requeue else "--no-requeue", "--export=NONE"]
    options += [option(f"--{key}", getattr(s, key)) for key in ("account", "qos", "constraint") if getattr(s, key)]
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
    requeue = requeue_lines(spec) if s.requeue else ""
    # the tasks' logs readable by the user alone where the job has secret values (masked when shown)
    private = "umask 077\n" if spec.secrets or secret_names(spec.env) else ""
    return f"""#!/bin/bash
{comment(f"{spec.job_name}: written by cloudtrain from {spec.config_file.name}")}
{header}
set -u
if [ -z "${{CLOUDTRAIN_CLEAN_ENV:-}}" ]; then
  # --export=NONE makes slurmd load the login profile (SLURM_GET_USER_ENV=1: PYENV_*, conda, modules):
  # start again with the Slurm variables and who the user is, nothing else
  keep=()
  while IFS= read -r -d '' kv; do
    case "$kv" in
      SLURM_GET_USER_ENV=*) ;;
      SLURM_*|HOME=*|USER=*|LOGNAME=*|TMPDIR=*|LANG=*) keep+=("$kv") ;;
    esac
  done < <(env -0)
  exec env -i CLOUDTRAIN_CLEAN_ENV=1 "${{keep[@]}}" /bin/bash "$0" "$@"
fi
RUN={q(paths.run)}
restart=${{SLURM_RESTART_COUNT:-0}}
out="$RUN/slurm/r$restart"
mkdir -p "$out"
export PATH={q(python_bin)}:{BASE_PATH}
export PYTHONUNBUFFERED=1
{private}say() {{
  # a line of this shell's, and when it was printed (batch-<id>.times: offset in the log, time)
  echo "$*"
  echo "$(stat -c %s "$RUN/slurm/batch-$SLURM_JOB_ID.log" 2>/dev/null || echo 0) $(date +%s.%N)" \\
    >> "$RUN/slurm/batch-$SLURM_JOB_ID.times"
}}
say "cloudtrain: job $SLURM_JOB_ID (restart $restart) on $SLURM_JOB_NODELIST"
date +%s > "$out/batch.start"
warned=""
slurm_state() {{
  # why Slurm stops this shell (a plain scancel, the hard time limit, a node failure: which nodes are down),
  # in its own words, kept in the run folder: the outcome outlives the controller's memory of the job (MinJobAge)
  scontrol show job -o "$SLURM_JOB_ID" > "$out/slurm-state.tmp" 2>/dev/null
  mv -f "$out/slurm-state.tmp" "$out/slurm-state"
  sinfo -h -N -n "$SLURM_JOB_NODELIST" -t down,drain,fail,no_respond -o %N > "$out/down-nodes" 2>/dev/null
}}
warn() {{
  warned=$1
  say "cloudtrain: $1 received: the tasks save a checkpoint and stop"
  date +%s > "$out/warned"
  # a signal to the step, not to srun: srun takes SIGTERM as "terminate the step now"
  scancel --signal=TERM "$SLURM_JOB_ID.0" 2>/dev/null
}}
trap 'warn USR1' USR1
trap 'slurm_state; warn TERM' TERM
srun --export=ALL --kill-on-bad-exit=0 --output="$out/task-%t.log" \\
  bash -c {q(task)} {q(paths.python)} "$RUN/slurm/launcher.py" "$RUN/slurm/tasks.json" &
step=$!
while :; do
  wait "$step"
  rc=$?
  kill -0 "$step" 2>/dev/null || break
done
echo "$rc" > "$out/batch.exit"
echo $(( $(date +%s) - $(cat "$out/batch.start") )) > "$out/batch.elapsed"
if [ "$warned" = USR1 ]; then
{requeue}  echo {TIMEOUT_EXIT} > "$out/batch.exit"
  exit {TIMEOUT_EXIT}
fi
exit "$rc"
"""


def sbatch_command(paths: Paths) -> list[str]:
    """How the script is submitted: the job id alone on stdout, and no environment from this shell."""
    return ["sbatch", "--parsable", "--export=NONE", f"{paths.run}/slurm/job.sh"]


#: What the batch shell does after the warning with ``slurm.requeue`` (see :func:`requeue_lines`).
REQUEUE = r"""if [ ! -e "$RUN/slurm/cancel-requested" ]; then
  used=$(cat "$RUN"/slurm/r*/batch.elapsed 2>/dev/null | awk '{{s += $1}} END {{print s + 0}}')
  budget_s={budget_s}
  left=$(( budget_s - used ))
  if [ "$restart" -ge {max_requeues} ]; then
    say "cloudtrain: not requeued: slurm.max_requeues ({max_requeues}) reached"
  elif [ "$budget_s" -gt 0 ] && [ "$left" -le {min_run_s} ]; then
    hours=$(awk -v u="$used" 'BEGIN {{printf "%.2f", u * {gpus} / 3600}}')
    say "cloudtrain: not requeued: budget.max_gpu_hours ({gpu_hours}) spent:" \
      "$hours GPU-hours over $((restart + 1)) runs"
  else
    ckpt_dir=$(python3 -c {chief_checkpoints} "$RUN/slurm/tasks.json" 2>/dev/null || true)
    step=$(ls "$ckpt_dir" 2>/dev/null | grep -E '^ckpt-[0-9]+(\.index)?$' | sed -E 's/^ckpt-([0-9]+).*/\1/' \
      | sort -n | tail -1)
    if [ -n "$step" ]; then
      resume="resumes from the checkpoint at step $step ($ckpt_dir/ckpt-$step)"
    else
      resume="starts over: no checkpoint was saved"
    fi
    say "cloudtrain: requeue $((restart + 1)) of {max_requeues}; the next run $resume"
    touch "$out/requeued"
    if [ "$budget_s" -gt 0 ]; then
      scontrol update JobId="$SLURM_JOB_ID" TimeLimit=$(( left / 60 )) 2>/dev/null || true
    fi
    scontrol requeue "$SLURM_JOB_ID"
    exit 0
  fi
fi
"""


def requeue_lines(spec: JobSpec) -> str:
    """After the time-limit warning, with ``slurm.requeue``: requeue unless cancelled, ``slurm.max_requeues``
    reached or ``budget.max_gpu_hours`` spent over all runs (then the job ends timed out, 124). Each requeue
    says its count and the newest ``ckpt-<step>`` the next run resumes from (or that there is none); a next
    run the budget cuts short gets the time left (``scontrol update TimeLimit``)."""
    s = slurm_section(spec)
    gpus = spec.gpus_total
    hours = spec.budget_gpu_hours
    text = REQUEUE.format(
        budget_s=int(hours * 3600 / gpus) if hours is not None and gpus else 0,
        max_requeues=s.max_requeues,
        min_run_s=s.grace + 60,
        gpus=gpus,
        gpu_hours=hours,
        chief_checkpoints=shlex.quote("import json,sys; print(json.load(open(sys.argv[1]))['tasks'][0]['dirs'][1])"),
    )
    return "".join(f"  {line}\n" for line in text.splitlines())


def package_path(spec: JobSpec, package: BuiltPackage) -> str:
    return f"{workdir(spec)}/packages/{package.sha256}/{package.filename}"


def tasks_shown(spec: JobSpec, python: str) -> list[dict[str, Any]]:
    """What a dry run shows of a module's tasks: name, command and folder. Their variables ask the contract's
    backend: they are :func:`.tasks.tasks_plan`'s, at submit (and a script's command is the contract's: there too)."""
    argv = [python, "-m", spec.package.module, *spec.module_args()]
    names = ["chief", *(f"worker-{i}" for i in range(spec.replica_count * tasks_per_node(spec) - 1))]  # as TF_CONFIG's
    return [{"name": n, "argv": argv, "cwd": f"{spec.output_dir.rstrip('/')}/slurm/work/{n}"} for n in names]
