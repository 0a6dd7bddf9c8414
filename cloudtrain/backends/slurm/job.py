"""A submitted Slurm job: its state, its lines, cancelling it."""

from __future__ import annotations

import datetime as dt
import json
import queue
import re
import shlex
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from cloudtrain.backends.base import HandleDefaults, JobState, JobStatus, LogLine
from cloudtrain.backends.files import JobFiles
from cloudtrain.backends.slurm import accounting, states
from cloudtrain.backends.slurm.files import ClusterFolder
from cloudtrain.backends.slurm.polling import ControllerPoll
from cloudtrain.backends.slurm.shell import ClusterShell
from cloudtrain.errors import BackendError, CloudUnreachable, UsageError
from cloudtrain.secrets.masking import ValueMasker

POLL_S = 1.0
MAX_SILENT_FOLLOWERS = 5  # a follower that never scans (no Python there, a lost folder): give up after these
TAIL_SOURCE = (Path(__file__).parent / "tail.py").read_text
READOUT_SOURCE = (Path(__file__).parent / "readout.py").read_text


def run_index(workdir: str, job_id: str) -> str:
    """The file that names a job's run folder (written at submit): ``<workdir>/jobs/<job id>``."""
    return f"{workdir.rstrip('/')}/jobs/{job_id}"


#: A job's full name, as ``status`` gives it: ``<cluster>:<run folder>`` (``local:/fsx/ct/runs/mnist-…``).
_FULL_NAME = re.compile(r"^(?P<cluster>[^\s/]+?):(?P<run>/(?!/).*)$")


def id_file(run: str) -> str:
    """The file in a run folder naming its job: ``{"job_id": …, "workdir": …}`` (written at submit, or by a
    sweep's trial on its node), so the full name finds the job with no history and no flags."""
    return f"{run.rstrip('/')}/slurm/id.json"


def by_full_name(text: str, clusters: Callable[[], set[str]]) -> tuple[str, dict[str, str]] | None:
    """``(job id, location)`` of a job by its full name, read from its run folder's :func:`id_file`; None
    when ``text`` is no such name. Only this machine (``local``) and the ``clusters`` this machine has
    used are asked: a name like ``C:/x`` never starts an ssh connection to a host called ``C``."""
    found = _FULL_NAME.match(text)
    if found is None:
        return None
    cluster = found["cluster"]
    if cluster != "local" and cluster not in clusters():
        return None
    shell = ClusterShell("" if cluster == "local" else cluster)
    try:
        read = shell.run(["cat", id_file(found["run"])], check=False)
        if read.returncode != 0:
            return None
        named = json.loads(read.stdout.decode())
        return str(named["job_id"]), {"region": cluster, "project": str(named["workdir"])}
    except (BackendError, ValueError, KeyError, TypeError):  # unreachable, not a run folder
        return None


class SlurmJob(HandleDefaults):
    backend_name = "slurm"

    @property
    def location(self) -> dict[str, str]:
        """The cluster (``--region``) and the workdir (``--project``): what ``attach`` needs again."""
        return {"region": self.region, "project": self.project}

    def __init__(
        self,
        shell: ClusterShell,
        job_id: str,
        run: str,
        *,
        cluster: str,
        workdir: str,
        python: str = "python3",
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.job_id, self.run, self.region, self.project = job_id, run, cluster, workdir
        self._shell, self._python, self._sleep = shell, python, sleep
        self._last: JobStatus | None = None
        self._asked_sacct = False
        self._usage: accounting.Usage | None = None  # an ended job's accounting does not change

    # --- state ---------------------------------------------------------------------------------

    def status(self) -> JobStatus:
        """The outcome a watcher recorded once the job ended, else the controller's word while it holds the job
        (refined by the job's files), else the job's own files, with ``sacct`` only where those say nothing:
        never UNKNOWN for an ended job, and a recorded terminal state is never replaced by a weaker reading."""
        files = self._files()
        recorded = files.get("outcome")
        if recorded is not None:
            state = JobState(recorded["state"])
            kept = {"NodeList": recorded["nodes"]} if recorded.get("nodes") else {}
            status = self._status(state, recorded["native"], recorded.get("message"), kept, files, self._accounting())
            self._last = status
            return status
        fields = self._scontrol()
        if fields is not None:
            native = fields.get("JobState", "")
            state = states.state_of(native, files.get("batch_exit"))
            reason = fields.get("Reason", "None")
            message = None
            if state is JobState.PENDING and reason not in ("None", ""):
                native, message = f"{native} ({reason})", f"waiting: {states.waiting_words(reason)}"
            elif state is JobState.PREEMPTED and fields.get("NodeList") and native.startswith("NODE_FAIL"):
                message = f"node {self._failed_nodes(fields['NodeList'])} failed"
            elif state.terminal:
                state, message = self._refine(state, files)
            usage = self._accounting() if state.terminal else None
            status = self._status(state, native, message, fields, files, usage)
        else:
            status = self._ended(files)
        if status.state.terminal:
            self._record(status, files, fields or {})
        self._last = status
        return status

    def _record(self, status: JobStatus, files: dict[str, Any], fields: dict[str, str]) -> None:
        """Keep the first terminal reading of this run in ``slurm/outcome.json`` (the first writer wins:
        ``set -C``); later readings (after ``MinJobAge``, without accounting) read it back."""
        outcome = {
            "restart": files.get("restart", 0),
            "state": status.state.value,
            "native": status.native_state,
            "message": status.message,
            "nodes": fields.get("NodeList"),
        }
        path = shlex.quote(f"{self.run}/slurm/outcome.json")
        self._shell.run(["sh", "-c", f"set -C; cat > {path}"], input=json.dumps(outcome).encode(), check=False)

    def _refine(self, state: JobState, files: dict[str, Any]) -> tuple[JobState, str | None]:
        """A terminal state from the controller, with the files' reason (which task failed, a cancel)."""
        state_files, _, message = states.outcome_from_files(files)
        if files.get("cancel_requested") and state is not JobState.SUCCEEDED:
            return JobState.CANCELLED, message
        if state is JobState.FAILED and state_files is JobState.TIMED_OUT:
            return JobState.TIMED_OUT, message
        return state, message if state is state_files or state is JobState.FAILED else None

    def _ended(self, files: dict[str, Any]) -> JobStatus:
        if not files.get("known"):
            raise UsageError(
                f"Slurm job {self.job_id} is unknown on {self.region}", "check the job id (cloudtrain list)"
            )
        usage = self._accounting()
        wrote = files.get("tasks") or files.get("batch_exit") is not None or files.get("slurm_state")
        if usage and usage.state and not wrote and not files.get("cancel_requested"):
            native = usage.state
            state, message = states.state_of(native, files.get("batch_exit")), None
        else:
            state, native, message = states.outcome_from_files(files)
        if native in ("NODE_FAIL", "BOOT_FAIL") and message == states.UNNAMED_NODE_FAILED:
            recorded = dict(w.split("=", 1) for w in (files.get("slurm_state") or "").split() if "=" in w)
            if recorded.get("NodeList"):
                message = f"node {self._failed_nodes(recorded['NodeList'])} failed"
        return self._status(state, native, message, {}, files, usage)

    def _status(
        self,
        state: JobState,
        native: str,
        message: str | None,
        fields: dict[str, str],
        files: dict[str, Any],
        usage: accounting.Usage | None = None,
    ) -> JobStatus:
        tasks = files.get("tasks", [])
        starts = [t["start"] for t in tasks if t.get("start") is not None]
        ends = [t["end"] for t in tasks if t.get("end") is not None]
        details: dict[str, Any] = {
            "cluster": self.region,
            "run": self.run,
            "nodes": fields.get("NodeList"),
            "restarts": files.get("restart", 0),
            "exit_codes": {f"{t.get('node')}/task-{t['task']}": t.get("exit") for t in tasks},
        }
        reason = fields.get("Reason", "None")
        waiting_for = reason if state is JobState.PENDING and reason not in ("None", "") else None
        if waiting_for is not None:
            details["pending_reason"] = waiting_for
        first = states.first_failure(tasks) if state is JobState.FAILED else None
        if first is not None and first.get("last_lines"):
            details["failed_task_output"] = [
                f"{first.get('node')}/task-{first['task']}: {x}" for x in first["last_lines"]
            ]
        used = accounting.gpu_hours(usage, tasks, files.get("gpus_per_node", 0)) if state.terminal else None
        if used is not None:
            details["gpu_hours"], details["gpu_hours_source"] = used

        def when(ts: float | None) -> dt.datetime | None:
            return dt.datetime.fromtimestamp(ts, dt.timezone.utc) if ts is not None else None

        return JobStatus(
            self.job_id,
            f"{self.region}:{self.run}",
            state,
            native,
            message,
            None,
            when(min(starts) if starts else None),
            when(max(ends) if ends and state.terminal else None),
            details,
            waiting_for=waiting_for,
            gpu_hours=used[0] if used else None,
            gpu_hours_source=used[1] if used else None,
            secret_values=files.get("mask") or (),  # every field shows *** for them, as the job's lines do
        )

    def _scontrol(self) -> dict[str, str] | None:
        result = self._shell.run(["scontrol", "show", "job", "-o", self.job_id], check=False)
        if result.returncode != 0:
            return None  # "Invalid job id": the controller forgot it (MinJobAge)
        text = result.stdout.decode(errors="replace")
        return dict(word.split("=", 1) for word in text.split() if "=" in word)

    def _failed_nodes(self, nodelist: str) -> str:
        """Which of the job's nodes failed: what srun wrote in the batch log ("Node failure on node2"), else
        those down now (a node may return to service before this runs), else the job's whole node list."""
        logged = self._shell.run(["sh", "-c", f"cat {shlex.quote(self.run)}/slurm/batch-*.log"], check=False)
        named = sorted(set(re.findall(r"Node failure on (\S+)", logged.stdout.decode(errors="replace"))))
        if named:
            return ", ".join(named)
        result = self._shell.run(
            ["sinfo", "-h", "-N", "-n", nodelist, "-t", "down,drain,fail,no_respond", "-o", "%N"], check=False
        )
        down = sorted(set(result.stdout.decode(errors="replace").split())) if result.returncode == 0 else []
        return ", ".join(down) or nodelist

    def _accounting(self) -> accounting.Usage | None:
        """``sacct``'s word on the job, once per handle; None on a cluster without accounting."""
        if not self._asked_sacct:
            self._asked_sacct = True
            result = self._shell.run(accounting.sacct_command(self.job_id), check=False)
            if result.returncode == 0:
                self._usage = accounting.parse_sacct(result.stdout.decode(errors="replace"), self.job_id)
        return self._usage

    def _files(self) -> dict[str, Any]:
        """What the run folder says: the latest run's batch status and task records, warnings, a cancel."""
        result = self._shell.run([self._python, "-c", READOUT_SOURCE(), self.run], check=False)
        try:
            files: dict[str, Any] = json.loads(result.stdout.decode())
            return files
        except ValueError:
            return {"known": False}

    def files(self) -> JobFiles:
        """The run folder on the cluster (``model/``, ``checkpoints/``, ``logs/``: TensorBoard, and
        ``slurm/``: the tasks' output), read over the login node's connection."""
        if not self._files().get("known"):
            return JobFiles({}, gone=f"its run folder {self.run} is not on the cluster")
        status = self.status()
        return JobFiles(
            {"output": ClusterFolder(self._shell, self.run, self._python)},
            ClusterFolder(self._shell, f"{self.run}/logs", self._python),
            running=not status.state.terminal,
        )

    def wait(self) -> JobStatus:
        poll = ControllerPoll()
        while not (status := self._polled(poll)).state.terminal:
            self._sleep(max(0.0, poll.wait_s()))
        return status

    def _polled(self, poll: ControllerPoll) -> JobStatus:
        """:meth:`status`, telling ``poll`` what it said and how long the cluster took to say it."""
        started = time.monotonic()
        status = self.status()
        poll.asked(status.native_state, time.monotonic() - started)
        return status

    def cancel(self) -> JobStatus:
        """``scancel``, after marking the run as cancelled (so the batch shell never requeues it and the
        outcome reads CANCELLED after the controller forgot the job)."""
        self._shell.write(f"{self.run}/slurm/cancel-requested", b"", 0o644)
        self._shell.run(["scancel", self.job_id], check=False)
        return self.status()

    # --- lines ---------------------------------------------------------------------------------

    def logs(
        self, follow: bool = False, drain: float | None = None, *, gone: Callable[[], bool] | None = None
    ) -> Iterator[LogLine]:
        """Every line of the batch shell and of each task (``node1/task-0``), each once; with ``follow``, until the
        job ended, then a last pass of a fresh follower (a follower's queued records may predate the end). A
        follower that stops early (a cut connection) restarts from the offsets given: nothing lost, nothing twice.
        ``gone``: whether the job left the controller, asked instead of it (a sweep's one ``squeue`` a round)."""
        offsets: dict[str, int] = {}
        mask = ValueMasker(self._files().get("mask") or ())  # secret values show as ***, as --local shows them
        poll = ControllerPoll()
        last_pass = not follow
        silent = 0  # followers in a row that stopped before their first scan
        while True:
            ended = scanned = False
            try:
                for item in self._tail(offsets, final=last_pass):
                    scanned = scanned or "tick" in item
                    if "tick" not in item:
                        offsets[item["f"]] = item["o"]
                        yield self._line({**item, "l": mask(item["l"])} if mask else item)
                    elif last_pass:
                        return
                    else:
                        if item.get("ended"):
                            poll.now()
                        if gone is not None:
                            if gone():
                                ended = True
                                break
                        elif poll.due() and self._polled(poll).state.terminal:
                            ended = True
                            break
            except CloudUnreachable:
                self._sleep(POLL_S)
            silent = 0 if scanned else silent + 1
            if silent >= MAX_SILENT_FOLLOWERS:
                raise BackendError(
                    f"cannot follow job {self.job_id}: `{self._python}` on {self.region} did not read {self.run}",
                    "check that the run folder exists and Python >= 3.10 runs there",
                )
            if silent:
                self._sleep(POLL_S)
            last_pass = last_pass or ended

    def _tail(self, offsets: dict[str, int], *, final: bool = False) -> Iterator[dict[str, Any]]:
        """The follower's records, from one long-lived process (over one ssh session); ``final``: the
        job has ended (or this is one read, ``logs`` without ``--follow``): a last line without a
        newline is given too."""
        argv = [self._python, "-c", TAIL_SOURCE(), self.run, json.dumps(offsets)] + (["final"] if final else [])
        proc = self._shell.popen(argv)
        lines: queue.Queue[bytes | None] = queue.Queue()

        def pump() -> None:
            for raw in proc.stdout or ():
                lines.put(raw)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        try:
            while (raw := lines.get()) is not None:
                try:
                    yield json.loads(raw)
                except ValueError:
                    continue
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=10)

    @staticmethod
    def _line(item: dict[str, Any]) -> LogLine:
        rel = item["f"]
        if rel.startswith("batch-"):
            replica = "batch"
        else:
            task = rel.rsplit("/", 1)[-1][len("task-") : -len(".log")]
            replica = f"{item.get('node') or 'node?'}/task-{task}"
        printed = item.get("t")  # when the task printed it (the launcher's record), else now: when it was read
        when = dt.datetime.fromtimestamp(printed, dt.timezone.utc) if printed else dt.datetime.now(dt.timezone.utc)
        return LogLine(when, replica, item["l"])
