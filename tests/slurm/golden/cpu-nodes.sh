#!/bin/bash
# demo-20261125-120000-abc123: written by cloudtrain from job.yaml
#SBATCH --job-name=demo-20261125-120000-abc123
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --time=0-02:00:00
#SBATCH --signal=B:USR1@120
#SBATCH --output=/fsx/cloudtrain/runs/demo-20261125-120000-abc123/slurm/batch-%j.log
#SBATCH --open-mode=append
#SBATCH --no-requeue
#SBATCH --export=NONE
set -u
if [ -z "${CLOUDTRAIN_CLEAN_ENV:-}" ]; then
  # --export=NONE makes slurmd load the login profile (SLURM_GET_USER_ENV=1: PYENV_*, conda, modules):
  # start again with the Slurm variables and who the user is, nothing else
  keep=()
  while IFS= read -r -d '' kv; do
    case "$kv" in
      SLURM_GET_USER_ENV=*) ;;
      SLURM_*|HOME=*|USER=*|LOGNAME=*|TMPDIR=*|LANG=*) keep+=("$kv") ;;
    esac
  done < <(env -0)
  exec env -i CLOUDTRAIN_CLEAN_ENV=1 "${keep[@]}" /bin/bash "$0" "$@"
fi
RUN=/fsx/cloudtrain/runs/demo-20261125-120000-abc123
restart=${SLURM_RESTART_COUNT:-0}
out="$RUN/slurm/r$restart"
mkdir -p "$out"
export PATH=/fsx/cloudtrain/envs/pkg-0123456789abcdef/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PYTHONUNBUFFERED=1
say() {
  # a line of this shell's, and when it was printed (batch-<id>.times: offset in the log, time)
  echo "$*"
  echo "$(stat -c %s "$RUN/slurm/batch-$SLURM_JOB_ID.log" 2>/dev/null || echo 0) $(date +%s.%N)" \
    >> "$RUN/slurm/batch-$SLURM_JOB_ID.times"
}
say "cloudtrain: job $SLURM_JOB_ID (restart $restart) on $SLURM_JOB_NODELIST"
date +%s > "$out/batch.start"
warned=""
slurm_state() {
  # why Slurm stops this shell (a plain scancel, the hard time limit, a node failure: which nodes are down),
  # in its own words, kept in the run folder: the outcome outlives the controller's memory of the job (MinJobAge)
  scontrol show job -o "$SLURM_JOB_ID" > "$out/slurm-state.tmp" 2>/dev/null
  mv -f "$out/slurm-state.tmp" "$out/slurm-state"
  sinfo -h -N -n "$SLURM_JOB_NODELIST" -t down,drain,fail,no_respond -o %N > "$out/down-nodes" 2>/dev/null
}
warn() {
  warned=$1
  say "cloudtrain: $1 received: the tasks save a checkpoint and stop"
  date +%s > "$out/warned"
  # a signal to the step, not to srun: srun takes SIGTERM as "terminate the step now"
  scancel --signal=TERM "$SLURM_JOB_ID.0" 2>/dev/null
}
trap 'warn USR1' USR1
trap 'slurm_state; warn TERM' TERM
srun --export=ALL --kill-on-bad-exit=0 --output="$out/task-%t.log" \
  bash -c 'set -e
exec "$0" "$@"' /fsx/cloudtrain/envs/pkg-0123456789abcdef/bin/python "$RUN/slurm/launcher.py" "$RUN/slurm/tasks.json" &
step=$!
while :; do
  wait "$step"
  rc=$?
  kill -0 "$step" 2>/dev/null || break
done
echo "$rc" > "$out/batch.exit"
echo $(( $(date +%s) - $(cat "$out/batch.start") )) > "$out/batch.elapsed"
if [ "$warned" = USR1 ]; then
  echo 124 > "$out/batch.exit"
  exit 124
fi
exit "$rc"
