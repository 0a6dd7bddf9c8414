"""The one table of Slurm states and the outcome read from a run folder after the controller forgot the job."""

from __future__ import annotations

from pathlib import Path

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.backends.slurm import states
from cloudtrain.backends.slurm.accounting import Usage, gpu_hours, parse_sacct, tres_gpus
from cloudtrain.backends.slurm.job import SlurmJob
from cloudtrain.backends.slurm.shell import ClusterShell
from cloudtrain.backends.slurm.states import outcome_from_files, state_of
from cloudtrain.errors import BackendError


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


NEVER_ENDED = "node node2 failed: task 1 never reported its end"


@pytest.mark.parametrize(
    ("files", "outcome"),
    [
        ({"batch_exit": 0, "tasks": [task(0, "node1", 0), task(1, "node2", 0)]}, ("SUCCEEDED", "COMPLETED", None)),
        (
            {"batch_exit": 1, "tasks": [task(0, "node1", 0), task(1, "node2", 3)]},
            ("FAILED", "FAILED", "task 1 on node2 exited with status 3"),
        ),
        (
            {"batch_exit": 124, "tasks": [task(0, "node1", 143)]},
            ("TIMED_OUT", "TIMEOUT", "stopped at the time limit (max_runtime) after the warning"),
        ),
        (
            {"cancel_requested": True, "tasks": [task(0, "node1", None)]},
            ("CANCELLED", "CANCELLED", "cancelled (cloudtrain cancel)"),
        ),
        ({"tasks": [task(0, "node1", 0), task(1, "node2", None)]}, ("PREEMPTED", "NODE_FAIL", NEVER_ENDED)),
        (
            {"batch_exit": 0, "tasks": [task(0, "node1", 0), task(1, "node2", None)]},
            ("PREEMPTED", "NODE_FAIL", NEVER_ENDED),
        ),
        ({"tasks": [], "started": True}, ("FAILED", "FAILED", "the job ended before its tasks started")),
        (
            {"batch_exit": 2, "tasks": [], "started": True},
            ("FAILED", "FAILED", "the batch script exited with status 2"),
        ),
        ({"started": False}, ("CANCELLED", "CANCELLED", "cancelled before it started")),  # scancel while pending
        (
            {"batch_exit": 2, "tasks": [], "started": False},
            ("FAILED", "FAILED", "the batch script exited with status 2"),
        ),
        (
            {"slurm_state": "JobId=7 JobState=BOOT_FAIL", "down_nodes": ["node1", "node2"]},
            ("PREEMPTED", "BOOT_FAIL", "node node1, node2 failed"),
        ),
        (
            {"slurm_state": "JobId=7 JobState=NODE_FAIL", "tasks": []},
            ("PREEMPTED", "NODE_FAIL", states.UNNAMED_NODE_FAILED),
        ),
    ],
)
def test_the_run_folder_alone_says_how_a_forgotten_job_ended(files, outcome):
    """State, Slurm's word and the message, exactly: each is shown (status, history) and the state is the exit code."""
    state, native, message = outcome_from_files(files)
    assert (state.name, native, message) == outcome


@pytest.mark.parametrize(
    ("recorded", "stopped"),
    [
        (None, ""),
        ("JobId=7 JobState=RUNNING", "RUNNING"),
        ("JobId=7 Comment=lr=0.1 JobState=TIMEOUT Reason=TimeLimit", "TIMEOUT"),  # a value may hold "="
        ("JobId=7 JobState=COMPLETING", "CANCELLED"),  # no reason: a plain scancel
        ("JobId=7 JobState=COMPLETING Reason=NodeDown", "NODE_FAIL"),
        ("JobId=7 JobState=COMPLETING Reason=TimeLimit,_more", "TIMEOUT"),  # the reason is before the first comma
        ("JobId=7 JobState=COMPLETING Reason=NodeNotResponding", "NODE_FAIL"),  # any node trouble
        ("JobId=7 JobState=COMPLETING Reason=Preempted", "PREEMPTED"),
        ("JobId=7 JobState=COMPLETING Reason=JobHeldAdmin", "CANCELLED"),
    ],
)
def test_why_slurm_stopped_a_job_is_read_from_the_line_its_batch_shell_kept(recorded, stopped):
    assert states.stopped_by(recorded) == stopped


@pytest.mark.parametrize(
    ("native", "state"),
    [("", JobState.UNKNOWN), ("  ", JobState.UNKNOWN), ("WEIRD", JobState.UNKNOWN), ("COMPLETED+", JobState.SUCCEEDED)],
)
def test_a_state_slurm_gives_no_word_for_or_one_marked_with_a_plus_reads_as_it_should(native, state):
    assert state_of(native) is state


def test_the_first_failure_is_the_earliest_end_a_task_without_an_end_last():
    unended = {**task(0, "node1", 1), "end": None}
    assert states.first_failure([unended, task(1, "node2", 2)]) == task(1, "node2", 2)
    assert states.first_failure([unended]) is unended


def test_a_failure_without_a_node_or_with_an_unknown_signal_is_still_one_line():
    assert states.failure_words({"task": 2, "exit": 1}) == "task 2 on a node exited with status 1"
    unknown = {"task": 0, "node": "node1", "exit": 227, "signal": 99}
    assert states.failure_words(unknown) == "task 0 on node1 was killed by signal 99 (status 227)"


def test_without_accounting_gpu_hours_are_the_tasks_times_times_gpus_per_node():
    tasks = [task(0, "node1", 0, 0.0, 1800.0), task(1, "node2", 0, 0.0, 3600.0)]
    assert gpu_hours(None, tasks, 4) == (6.0, "the launcher's start and end times × GPUs per node")  # 1.5 h × 4
    assert gpu_hours(None, [task(0, "node1", None)], 4) is None  # never ended: nothing to count


SACCT = Path(__file__).parent / "golden" / "sacct-parsable2.txt"


def test_sacct_gpu_hours_count_every_run_of_a_requeued_job():
    """``sacct -j 1,2,3,4 -X -D --parsable2 -o JobID,State,ElapsedRaw,AllocTRES,NNodes`` (slurm-wlm 22.05.8)
    on this test cluster with accounting on (mariadb + slurmdbd, GresTypes=gpu, 2 GPUs per node as
    gres.conf files), captured once: job 1 on 2 nodes × 2 GPUs, job 2 failed, job 3 requeued by
    ``scontrol requeue`` then completed, job 4 cancelled (sacct lists job 3's second run last)."""
    text = SACCT.read_text()
    assert parse_sacct(text, "3") == Usage("COMPLETED", round((2 * 2 + 6 * 2) / 3600, 4), 2)
    assert parse_sacct(text, "1") == Usage("COMPLETED", round(4 * 4 / 3600, 4), 1)
    cancelled = parse_sacct(text, "4")
    assert cancelled is not None and state_of(cancelled.state) is JobState.CANCELLED
    assert parse_sacct(text, "5") is None and parse_sacct("", "1") is None
    assert gpu_hours(cancelled, [task(0, "node1", 0, 0.0, 3600.0)], 2) == (
        round(3 * 2 / 3600, 4),
        "sacct (AllocTRES GPUs × ElapsedRaw of every run)",
    )


@pytest.mark.parametrize(
    ("tres", "gpus"),
    [
        ("billing=2,cpu=2,gres/gpu=4,node=2", 4),
        ("billing=2,cpu=2,mem=1G,node=2", 0),
        ("cpu=8,gres/gpu:h100=8,node=1", 8),
        ("cpu=8,gres/gpu=8,gres/gpu:h100=8,node=1", 8),
    ],
)
def test_gpus_are_read_from_alloc_tres(tres, gpus):
    assert tres_gpus(tres) == gpus


def test_a_follower_that_never_reads_the_run_folder_gives_up_with_one_line(tmp_path):
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


def test_the_task_that_failed_first_is_named_with_its_signal_not_task_0():
    """kill -9 of the worker's trainer: the worker ends first (137, SIGKILL); the chief fails after it."""
    worker = {**task(1, "node2", 137, 100.0, 150.0), "signal": 9}
    chief = task(0, "node1", 1, 100.0, 180.0)
    state, _, message = outcome_from_files({"batch_exit": 1, "tasks": [chief, worker]})
    assert state is JobState.FAILED
    assert message == "task 1 on node2 was killed by SIGKILL (status 137)"
    later_first = {**task(0, "node1", 3, 100.0, 120.0)}
    assert outcome_from_files({"batch_exit": 1, "tasks": [later_first, task(1, "node2", 1, 100.0, 130.0)]})[2] == (
        "task 0 on node1 exited with status 3"
    )


@pytest.mark.parametrize(
    ("recorded", "state", "words"),
    [
        ("JobId=7 JobName=probe JobState=COMPLETING Reason=None Dependency=(null)", JobState.CANCELLED, "(scancel)"),
        ("JobId=7 JobState=COMPLETING Reason=TimeLimit", JobState.TIMED_OUT, "hard time limit"),
        ("JobId=7 JobState=TIMEOUT Reason=TimeLimit", JobState.TIMED_OUT, "hard time limit"),
        ("JobId=7 JobState=COMPLETING Reason=NodeDown", JobState.PREEMPTED, "node node2 failed"),
        ("JobId=7 JobState=NODE_FAIL Reason=NodeDown", JobState.PREEMPTED, "node node2 failed"),
    ],
)
def test_the_batch_shells_own_record_of_why_slurm_stopped_it_outranks_the_task_exits(recorded, state, words):
    """After MinJobAge without accounting: the task on the surviving node was killed (143), the other never
    reported; the batch shell recorded the controller's state when it got SIGTERM."""
    files = {"slurm_state": recorded, "tasks": [task(0, "node1", 143), task(1, "node2", None)]}
    got, _, message = outcome_from_files(files)
    assert got is state and message is not None and words in message, message


@pytest.mark.parametrize("unfinished_on", ["node1", "node2"])
def test_a_failed_node_is_the_one_the_batch_shell_found_down_whichever_task_reported(unfinished_on):
    """Which task got to write its end is a race when Slurm kills the step (a CI run saw node1's task never
    report while node2 was the one set down): the nodes the batch shell found down when it got SIGTERM decide."""
    exits = {"node1": 143, "node2": 143} | {unfinished_on: None}
    files = {
        "slurm_state": "JobId=7 JobState=NODE_FAIL Reason=NodeDown",
        "down_nodes": ["node2"],
        "tasks": [task(0, "node1", exits["node1"]), task(1, "node2", exits["node2"])],
    }
    assert outcome_from_files(files) == (JobState.PREEMPTED, "NODE_FAIL", "node node2 failed")


def test_without_a_down_node_on_record_the_failed_node_is_the_one_whose_task_never_reported():
    files = {"slurm_state": "JobId=7 JobState=NODE_FAIL", "tasks": [task(0, "node1", 143), task(1, "node3", None)]}
    assert outcome_from_files(files)[2] == "node node3 failed"


@pytest.mark.parametrize(
    ("reason", "words"),
    [
        (
            "ReqNodeNotAvail,_UnavailableNodes:gpu-[03-04]",
            "nodes required for the job are down, drained or reserved (unavailable: gpu-[03-04])",
        ),
        (
            "Nodes_required_for_job_are_DOWN,_DRAINED_or_reserved_for_jobs_in_higher_priority_partitions",
            "nodes required for the job are down, drained or reserved",
        ),
        ("ReqNodeNotAvail", "nodes required for the job are down, drained or reserved"),
        ("Priority", "Priority: jobs of higher priority are ahead of it"),
        ("Resources", "Resources: the nodes it needs are busy"),
        ("JobHeldUser", "JobHeldUser: held by its owner (scontrol release)"),
        ("QOSMaxGRESPerUser", "QOSMaxGRESPerUser"),  # a code without words stays as scontrol gave it
        ("AssocGrpGRES,_with_more", "AssocGrpGRES, with more"),
        ("Priority,_a,_b", "Priority: jobs of higher priority are ahead of it"),  # the code is before the first comma
        (
            "ReqNodeNotAvail,_UnavailableNodes:node2,",
            "nodes required for the job are down, drained or reserved (unavailable: node2)",
        ),
    ],
)
def test_a_pending_reason_reads_in_words_whichever_form_scontrol_prints(reason: str, words: str) -> None:
    assert states.waiting_words(reason) == words
