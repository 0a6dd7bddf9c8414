"""The one table of Slurm states and the outcome read from a run folder after the controller forgot the job."""

from __future__ import annotations

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.backends.slurm.job import SlurmJob
from cloudtrain.backends.slurm.states import outcome_from_files, state_of


@pytest.mark.parametrize(
    ("native", "state", "code"),
    [
        ("COMPLETED", JobState.SUCCEEDED, 0),
        ("FAILED", JobState.FAILED, 1),
        ("OUT_OF_MEMORY", JobState.FAILED, 1),
        ("TIMEOUT", JobState.TIMED_OUT, 124),
        ("DEADLINE", JobState.TIMED_OUT, 124),
        ("CANCELLED by 0", JobState.CANCELLED, 130),
        ("PREEMPTED", JobState.PREEMPTED, 5),
        ("NODE_FAIL", JobState.PREEMPTED, 5),
        ("BOOT_FAIL", JobState.PREEMPTED, 5),
        ("PENDING", JobState.PENDING, None),
        ("REQUEUED", JobState.PENDING, None),
        ("RUNNING", JobState.RUNNING, None),
        ("COMPLETING", JobState.STOPPING, None),
    ],
)
def test_each_slurm_state_maps_through_the_one_table(native, state, code):
    assert state_of(native) is state
    if code is not None:
        assert state.exit_code == code


def test_a_job_its_batch_shell_stopped_at_the_warning_is_timed_out():
    assert state_of("FAILED", batch_exit=124) is JobState.TIMED_OUT


def task(i, node, exit, start=100.0, end=200.0):
    return {"task": i, "node": node, "exit": exit, "start": start, "end": end if exit is not None else None}


@pytest.mark.parametrize(
    ("files", "state", "words"),
    [
        ({"batch_exit": 0, "tasks": [task(0, "node1", 0), task(1, "node2", 0)]}, JobState.SUCCEEDED, None),
        (
            {"batch_exit": 1, "tasks": [task(0, "node1", 0), task(1, "node2", 3)]},
            JobState.FAILED,
            "task 1 on node2 exited with status 3",
        ),
        ({"batch_exit": 124, "tasks": [task(0, "node1", 143)]}, JobState.TIMED_OUT, "time limit"),
        ({"cancel_requested": True, "tasks": [task(0, "node1", None)]}, JobState.CANCELLED, "cancelled"),
        ({"tasks": [task(0, "node1", 0), task(1, "node2", None)]}, JobState.PREEMPTED, "node node2 failed"),
        ({"tasks": []}, JobState.FAILED, "before its tasks started"),
    ],
)
def test_the_run_folder_alone_says_how_a_forgotten_job_ended(files, state, words):
    got, native, message = outcome_from_files(files)
    assert got is state and got is not JobState.UNKNOWN
    assert (message is None) if words is None else (words in message)


def test_gpu_hours_are_the_tasks_times_times_gpus_per_node():
    job = SlurmJob(None, "7", "/fsx/runs/x", cluster="local", workdir="/fsx")
    files = {"tasks": [task(0, "node1", 0, 0.0, 1800.0), task(1, "node2", 0, 0.0, 3600.0)], "gpus_per_node": 4}
    status = job._status(JobState.SUCCEEDED, "COMPLETED", None, {}, files)
    assert status.details["gpu_hours"] == 6.0  # (0.5 h + 1 h) × 4 GPUs
    assert status.details["exit_codes"] == {"node1/task-0": 0, "node2/task-1": 0}


def test_a_follower_that_never_reads_the_run_folder_gives_up_with_one_line(tmp_path):
    from cloudtrain.backends.slurm.shell import ClusterShell
    from cloudtrain.errors import BackendError

    job = SlurmJob(
        ClusterShell(""),
        "7",
        str(tmp_path / "gone"),
        cluster="local",
        workdir=str(tmp_path),
        python="false",
        sleep=lambda s: None,
    )
    with pytest.raises(BackendError, match="cannot follow job 7"):
        list(job.logs(follow=True))
