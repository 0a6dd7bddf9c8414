"""Slurm's job states onto cloudtrain's, through one table; and the outcome from the launcher's files."""

from __future__ import annotations

import signal
from typing import Any

from cloudtrain.backends.slurm.job_settings import TIMEOUT_EXIT
from cloudtrain.job_states import JobState

#: squeue / scontrol / sacct state → cloudtrain's (its exit code: JobState.exit_code).
STATES = {
    "PENDING": JobState.PENDING,
    "CONFIGURING": JobState.PENDING,
    "REQUEUED": JobState.PENDING,
    "REQUEUE_HOLD": JobState.PENDING,
    "REQUEUE_FED": JobState.PENDING,
    "RESV_DEL_HOLD": JobState.PENDING,
    "SUSPENDED": JobState.PENDING,
    "RESIZING": JobState.RUNNING,
    "RUNNING": JobState.RUNNING,
    "SIGNALING": JobState.STOPPING,
    "STAGE_OUT": JobState.STOPPING,
    "COMPLETING": JobState.STOPPING,
    "STOPPED": JobState.STOPPING,
    "COMPLETED": JobState.SUCCEEDED,
    "FAILED": JobState.FAILED,
    "OUT_OF_MEMORY": JobState.FAILED,
    "SPECIAL_EXIT": JobState.FAILED,
    "TIMEOUT": JobState.TIMED_OUT,
    "DEADLINE": JobState.TIMED_OUT,
    "CANCELLED": JobState.CANCELLED,
    "PREEMPTED": JobState.PREEMPTED,
    "NODE_FAIL": JobState.PREEMPTED,
    "BOOT_FAIL": JobState.PREEMPTED,
}


#: Why a job waits, in words, for the reasons scontrol gives as codes (``Reason=Priority``).
_WAITING_FOR = {
    "Resources": "the nodes it needs are busy",
    "Priority": "jobs of higher priority are ahead of it",
    "PartitionDown": "its partition is down",
    "PartitionInactive": "its partition is inactive",
    "BeginTime": "its start time has not come",
    "Dependency": "a job it depends on has not ended",
    "JobHeldUser": "held by its owner (scontrol release)",
    "JobHeldAdmin": "held by an administrator",
    "Reservation": "its reservation has not started",
}
_UNAVAILABLE_NODES = "nodes required for the job are down, drained or reserved"


def waiting_words(reason: str) -> str:
    """A pending job's ``Reason`` in words, the same whether scontrol prints its code
    (``ReqNodeNotAvail,_UnavailableNodes:node2``) or its description with underscores, naming the unavailable
    nodes when scontrol does."""
    text = reason.replace("_", " ").strip()
    if text.startswith("ReqNodeNotAvail") or text.startswith("Nodes required for job are DOWN"):
        nodes = text.partition("UnavailableNodes:")[2].strip(" ,")
        return f"{_UNAVAILABLE_NODES} (unavailable: {nodes})" if nodes else _UNAVAILABLE_NODES
    code = text.split(",", 1)[0]
    return f"{code}: {_WAITING_FOR[code]}" if code in _WAITING_FOR else text


def state_of(native: str, batch_exit: int | None = None) -> JobState:
    """``native`` (``CANCELLED by 0`` reads as CANCELLED); a job whose batch shell stopped it for the
    time-limit warning (exit 124) is TIMED_OUT, whatever Slurm calls it."""
    word = native.split()[0].rstrip("+") if native.strip() else ""
    state = STATES.get(word, JobState.UNKNOWN)
    if state is JobState.FAILED and batch_exit == TIMEOUT_EXIT:
        return JobState.TIMED_OUT
    return state


def first_failure(tasks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The task that failed first (the earliest end; a peer that failed because of it ends later), or None."""
    failed = [t for t in tasks if t.get("exit") not in (0, None)]
    return min(failed, key=lambda t: (t.get("end") or float("inf"), t["task"])) if failed else None


def failure_words(t: dict[str, Any]) -> str:
    """``task 1 on node2 exited with status 3`` / ``… was killed by SIGKILL (status 137)``."""
    where = f"task {t['task']} on {t.get('node') or 'a node'}"
    if t.get("signal"):
        try:
            name = signal.Signals(t["signal"]).name
        except ValueError:
            name = f"signal {t['signal']}"
        return f"{where} was killed by {name} (status {t['exit']})"
    return f"{where} exited with status {t['exit']}"


UNNAMED_NODE_FAILED = "a node of the job failed"
#: While Slurm stops a job, ``scontrol`` says COMPLETING; the reason tells why (none: a cancel).
_STOPPING_REASONS = {"TimeLimit": "TIMEOUT", "NodeDown": "NODE_FAIL", "Preempted": "PREEMPTED", "None": "CANCELLED"}


def stopped_by(recorded: str | None) -> str:
    """The state Slurm stopped a job for, from the ``scontrol show job -o`` line the batch shell kept when
    it got SIGTERM (``slurm-state``): CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED …; "" when it kept none."""
    fields = dict(word.split("=", 1) for word in (recorded or "").split() if "=" in word)
    state = fields.get("JobState", "")
    if state == "COMPLETING":
        reason = fields.get("Reason", "None").split(",")[0]
        return _STOPPING_REASONS.get(reason, "NODE_FAIL" if "node" in reason.lower() else "CANCELLED")
    return state


#: What the batch shell recorded of the controller's state when Slurm stopped it (``slurm-state``).
_STOPPED_BY_SLURM = {
    "CANCELLED": (JobState.CANCELLED, "CANCELLED", "cancelled (scancel)"),
    "TIMEOUT": (JobState.TIMED_OUT, "TIMEOUT", "stopped at the hard time limit"),
    "DEADLINE": (JobState.TIMED_OUT, "DEADLINE", "stopped at the job's deadline"),
    "PREEMPTED": (JobState.PREEMPTED, "PREEMPTED", "preempted by the cluster"),
}


def outcome_from_files(files: dict[str, Any]) -> tuple[JobState, str, str | None]:
    """(state, native state, message) of an ended job from its run folder: the last run's ``batch.exit``,
    ``task-*.json``, ``slurm-state`` and ``cancel-requested``. Never UNKNOWN: a job the controller forgot has
    ended, and a batch shell that left no status was killed."""
    tasks = files.get("tasks", [])
    batch = files.get("batch_exit")
    unfinished = [t for t in tasks if t.get("exit") is None]
    if files.get("cancel_requested"):
        return JobState.CANCELLED, "CANCELLED", "cancelled (cloudtrain cancel)"
    if batch == TIMEOUT_EXIT:
        return JobState.TIMED_OUT, "TIMEOUT", "stopped at the time limit (max_runtime) after the warning"
    stopped = stopped_by(files.get("slurm_state"))
    if stopped in _STOPPED_BY_SLURM:
        return _STOPPED_BY_SLURM[stopped]
    if stopped in ("NODE_FAIL", "BOOT_FAIL"):
        # the controller's word the batch shell kept beats which task got to report (a race in the kill)
        nodes = files.get("down_nodes") or sorted({t["node"] for t in unfinished if t.get("node")})
        return JobState.PREEMPTED, stopped, f"node {', '.join(nodes)} failed" if nodes else UNNAMED_NODE_FAILED
    first = first_failure(tasks)
    if first is not None:
        return JobState.FAILED, "FAILED", failure_words(first)
    if batch == 0 and tasks and all(t.get("exit") == 0 for t in tasks):
        return JobState.SUCCEEDED, "COMPLETED", None
    if batch is None and not tasks and files.get("started") is False:  # scancel of a pending job
        return JobState.CANCELLED, "CANCELLED", "cancelled before it started"
    if unfinished:
        t = unfinished[0]
        return JobState.PREEMPTED, "NODE_FAIL", f"node {t['node']} failed: task {t['task']} never reported its end"
    return (
        JobState.FAILED,
        "FAILED",
        f"the batch script exited with status {batch}"
        if batch is not None
        else "the job ended before its tasks started",
    )
