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
from cloudtrain.backends.slurm.shell import ClusterShell
from cloudtrain.errors import BackendError, CloudUnreachable, UsageError

POLL_S = 1.0
MAX_SILENT_FOLLOWERS = 5  # a follower that never scans (no Python there, a lost folder): give up after these
TAIL_SOURCE = (Path(__file__).parent / "tail.py").read_text


def run_index(workdir: str, job_id: str) -> str:
    """The file that names a job's run folder (written at submit): ``<workdir>/jobs/<job id>``."""
    return f"{workdir.rstrip('/')}/jobs/{job_id}"


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
        """From the controller while it holds the job, else ``sacct`` where accounting is on, else the
        launcher's files in the run folder: never UNKNOWN for a job that ended."""
        fields = self._scontrol()
        files = self._files()
        if fields is not None:
            native = fields.get("JobState", "")
            state = states.state_of(native, files.get("batch_exit"))
            reason = fields.get("Reason", "None")
            message = None
            if state is JobState.PENDING and reason not in ("None", ""):
                native, message = f"{native} ({reason})", f"waiting: {reason}"
            elif state is JobState.PREEMPTED and fields.get("NodeList") and native.startswith("NODE_FAIL"):
                message = f"node {self._failed_nodes(fields['NodeList'])} failed"
            elif state.terminal:
                state, message = self._refine(state, files)
            usage = self._accounting() if state.terminal else None
            status = self._status(state, native, message, fields, files, usage)
        else:
            status = self._ended(files)
        self._last = status
        return status

    def _refine(self, state: JobState, files: dict) -> tuple[JobState, str | None]:
        """A terminal state from the controller, with the files' reason (which task failed, a cancel)."""
        state_files, _, message = states.outcome_from_files(files)
        if files.get("cancel_requested") and state is not JobState.SUCCEEDED:
            return JobState.CANCELLED, message
        if state is JobState.FAILED and state_files is JobState.TIMED_OUT:
            return JobState.TIMED_OUT, message
        return state, message if state is state_files or state is JobState.FAILED else None

    def _ended(self, files: dict) -> JobStatus:
        if not files.get("known"):
            raise UsageError(
                f"Slurm job {self.job_id} is unknown on {self.region}", "check the job id (cloudtrain list)"
            )
        usage = self._accounting()
        if usage and usage.state:
            native = usage.state
            state, _, message = states.outcome_from_files(files)
            state = states.state_of(native, files.get("batch_exit"))
        else:
            state, native, message = states.outcome_from_files(files)
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
        used = accounting.gpu_hours(usage, tasks, files.get("gpus_per_node", 0)) if state.terminal else None
        if used is not None:
            details["gpu_hours"], details["gpu_hours_source"] = used
        when = lambda ts: dt.datetime.fromtimestamp(ts, dt.timezone.utc) if ts is not None else None  # noqa: E731
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

    def _files(self) -> dict:
        """What the run folder says: the latest run's batch status and task records, warnings, a cancel."""
        script = (
            "import json, os, sys\n"
            "run = os.path.join(sys.argv[1], 'slurm')\n"
            "out = {'known': os.path.isdir(run)}\n"
            "runs = sorted(int(n[1:]) for n in os.listdir(run) if n[:1] == 'r' and n[1:].isdigit())"
            " if out['known'] else []\n"
            "out['restart'] = runs[-1] if runs else 0\n"
            "last = os.path.join(run, f\"r{out['restart']}\")\n"
            "def read(p):\n"
            "    try:\n"
            "        with open(p) as f: return f.read()\n"
            "    except OSError: return None\n"
            "b = read(os.path.join(last, 'batch.exit'))\n"
            "out['batch_exit'] = int(b) if b and b.strip().lstrip('-').isdigit() else None\n"
            "out['tasks'] = [json.loads(read(os.path.join(last, n)) or 'null') for n in sorted(os.listdir(last))"
            " if n.startswith('task-') and n.endswith('.json')] if os.path.isdir(last) else []\n"
            "out['tasks'] = [t for t in out['tasks'] if t]\n"
            "out['warned'] = os.path.exists(os.path.join(last, 'warned'))\n"
            "out['cancel_requested'] = os.path.exists(os.path.join(run, 'cancel-requested'))\n"
            "plan = read(os.path.join(run, 'tasks.json'))\n"
            "out['gpus_per_node'] = json.loads(plan).get('gpus_per_node', 0) if plan else 0\n"
            "print(json.dumps(out))\n"
        )
        result = self._shell.run([self._python, "-c", script, self.run], check=False)
        try:
            return json.loads(result.stdout.decode())
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
        while not (status := self.status()).state.terminal:
            self._sleep(POLL_S)
        return status

    def cancel(self) -> JobStatus:
        """``scancel``, after marking the run as cancelled (so the batch shell never requeues it and the
        outcome reads CANCELLED after the controller forgot the job)."""
        self._shell.write(f"{self.run}/slurm/cancel-requested", b"", 0o644)
        self._shell.run(["scancel", self.job_id], check=False)
        return self.status()

    # --- lines ---------------------------------------------------------------------------------

    def logs(self, follow: bool = False, drain: float | None = None) -> Iterator[LogLine]:
        """Every line of the batch shell and of each task (``node1/task-0``), each once; with ``follow``,
        until the job ended, then one last pass of a fresh follower over the files (a follower's queued
        records may predate the end). A follower that stops early (a cut ssh connection) is started
        again from the offsets of the lines already given: nothing lost, nothing twice."""
        offsets: dict[str, int] = {}
        last_pass = not follow
        silent = 0  # followers in a row that stopped before their first scan
        while True:
            ended = scanned = False
            try:
                for item in self._tail(offsets):
                    scanned = scanned or "tick" in item
                    if "tick" not in item:
                        offsets[item["f"]] = item["o"]
                        yield self._line(item)
                    elif last_pass:
                        return
                    elif item["tick"] % 5 == 0 and self.status().state.terminal:
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

    def _tail(self, offsets: dict[str, int]) -> Iterator[dict]:
        """The follower's records, from one long-lived process (over one ssh session)."""
        proc = self._shell.popen([self._python, "-c", TAIL_SOURCE(), self.run, json.dumps(offsets)])
        lines: queue.Queue = queue.Queue()

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
    def _line(item: dict) -> LogLine:
        rel = item["f"]
        if rel.startswith("batch-"):
            replica = "batch"
        else:
            task = rel.rsplit("/", 1)[-1][len("task-") : -len(".log")]
            replica = f"{item.get('node') or 'node?'}/task-{task}"
        return LogLine(dt.datetime.now(dt.timezone.utc), replica, item["l"])
