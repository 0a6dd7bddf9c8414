"""A Slurm sweep once submitted: its state from ``squeue`` and its journal, its trials' lines, cancel, resume.

What the commands get by the first array's id (``<workdir>/sweeps/<id>``). The journal is read from a copy, checked
by :mod:`cloudtrain.sweeps.journal` before Optuna replays it; nothing here writes to it."""

from __future__ import annotations

import dataclasses
import json
import queue
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from cloudtrain import creation_window
from cloudtrain.backends.base import HandleDefaults, JobState, JobStatus, LogLine
from cloudtrain.backends.slurm.job import SlurmJob
from cloudtrain.backends.slurm.section import cluster_of
from cloudtrain.backends.slurm.shell import ClusterShell
from cloudtrain.errors import BackendError, CloudtrainError, UsageError
from cloudtrain.sweeps import journal, results

STATE = "sweep.json"
POLL_S = 6.0  # one squeue per round: a watcher costs the controller 10 calls a minute
_TRIAL_ID = re.compile(r"^(?P<array>\d+)_(?P<task>\d+)$")


def sweep_index(workdir: str, job_id: str) -> str:
    """The file naming a sweep's folder by its first array's id (``status``/``cancel`` by id)."""
    return f"{workdir.rstrip('/')}/sweeps/{job_id}"


def attach(shell: ClusterShell, job_id: str, cluster: str, workdir: str) -> SlurmSweep | None:
    """The sweep one of whose arrays is ``job_id``, or None when it is no sweep's. The handle's id is the
    sweep's first array (the one history records), whichever array it was found by."""
    found = shell.run(["cat", sweep_index(workdir, job_id)], check=False)
    if found.returncode != 0:
        return None
    sweep = SlurmSweep(shell, job_id, found.stdout.decode().strip(), cluster=cluster, workdir=workdir)
    sweep.job_id = next(iter(sweep.arrays()), job_id)
    return sweep


def trial_location(
    text: str, find: Callable[[str], Any], records: Callable[[], list[Any]]
) -> tuple[str, dict[str, str]] | None:
    """A Slurm sweep's array or trial (``<array>_<task>``) by its id, and where its sweep is, found through history
    (its first array) or the sweep workdir's index of later arrays (``<workdir>/sweeps/<array>``), so no flags
    are needed; None otherwise (the first array itself is history's to find)."""
    match = _TRIAL_ID.match(text)
    array = match["array"] if match else text if text.isdigit() else None
    if array is None:
        return None
    entry = find(array)
    if entry is not None:
        if match is None or entry.backend != "slurm" or getattr(entry, "kind", "job") != "sweep":
            return None
        return text, {"region": entry.region, "project": entry.project or ""}
    places = {(r.region, r.project) for r in records() if r.backend == "slurm" and r.kind == "sweep" and r.project}
    for region, workdir in sorted(places):
        try:
            shell, region = cluster_shell(region)
            indexed = shell.run(["test", "-e", sweep_index(workdir, array)], check=False).returncode == 0
        except CloudtrainError:  # a cluster out of reach holds none we can find now
            continue
        if indexed:
            return text, {"region": region, "project": workdir}
    return None


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

    def submit_array(self, first: int, count: int, parallel: int, rerun: list[int]) -> str:
        """Submit an array, record its id in ``slurm/arrays`` and its index (``<workdir>/sweeps/<id>``); its id. Ctrl-C
        is held from ``sbatch`` until the creation window closes and ``sbatch`` runs out of the terminal's process
        group: the array is never left unrecorded."""
        creation_window.hold()
        command = sbatch_command(self.folder, first, count, parallel, rerun)
        result = self._shell.run(command, check=False)
        if result.returncode != 0:
            why = (result.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
            raise BackendError(f"sbatch failed: {why.removeprefix('sbatch: error: ')}")
        array = result.stdout.decode().strip().split(";")[0]
        arrays = [*self.arrays(), array]
        self._shell.write(f"{self.folder}/slurm/arrays", ("\n".join(arrays) + "\n").encode(), 0o644)
        self._shell.write(sweep_index(self.project, array), self.folder.encode(), 0o644)
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
        left, resume = (table.max_trials or 0) - counted, f"cloudtrain sweep resume {self.job_id}"
        if table.state == "CANCELLED":
            return JobState.CANCELLED, "CANCELLED", f"cancelled with {left} trials to run: {resume}"
        if left > 0:
            return JobState.FAILED, "STOPPED", f"{left} of {table.max_trials} trials did not finish: {resume}"
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
            ended = "STOPPED" if word == "DONE" else word  # a sweep cancelled before its first trial: CANCELLED
            return results.SweepResults(self.job_id, state["metric"], state["goal"], ended, (), state["max_trials"])
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
        """Each trial's lines, labelled ``tNNN/<node>/task-T``, trial after trial; with ``follow``, every running
        trial's as they come (the follower of :meth:`SlurmJob.logs` each, merged here) until the sweep ended. The
        controller is asked once a round for every trial (``squeue`` of the arrays): a trial ended once it left."""
        if not follow:
            for number, job_id, run, _ in self._trial_runs():
                yield from _labelled(number, self._trial(job_id, run).logs(follow=False))
            return
        arrived: queue.Queue[LogLine | Exception | None] = queue.Queue()  # None: a trial's follower ended
        stop = threading.Event()
        listed: list[set[str]] = [set()]  # the array tasks the controller holds, as of this round's squeue

        def follow_trial(number: int, job: SlurmJob, running: bool) -> None:
            try:
                # gone once its task left the list, or once nobody reads (its follower then ends, not leaks)
                lines = job.logs(follow=running, gone=lambda: stop.is_set() or job.job_id not in listed[0])
                for line in _labelled(number, lines):
                    if stop.is_set():
                        return
                    arrived.put(line)
            except Exception as exc:  # the caller's to raise: a follower that cannot read its trial
                arrived.put(exc)
            finally:
                arrived.put(None)

        started: set[str] = set()
        following = 0
        try:
            while True:
                runs = self._trial_runs()  # before squeue: a trial asked for but not listed has ended
                alive = {task for task, _ in self._tasks()}  # one squeue a round, for every trial's follower
                listed[0] = alive
                for number, job_id, run, unfinished in runs:
                    # an interrupted trial a resumed array runs again: its new task's lines, not the old ones
                    waiting = unfinished and job_id not in alive and bool(alive)
                    if job_id not in started and not waiting:
                        started.add(job_id)
                        following += 1
                        trial = self._trial(job_id, run)
                        args = (number, trial, job_id in alive)
                        threading.Thread(target=follow_trial, args=args, daemon=True).start()
                ended, deadline = not alive, time.monotonic() + POLL_S
                while following:  # a round's lines; once the sweep ended, until every follower has given its last
                    wait = None if ended else deadline - time.monotonic()
                    if wait is not None and wait <= 0:
                        break
                    try:
                        item = arrived.get(timeout=wait)
                    except queue.Empty:
                        break
                    if item is None:
                        following -= 1
                    elif isinstance(item, Exception):
                        raise item
                    else:
                        yield item
                if ended:
                    return
                self._sleep(max(0.0, deadline - time.monotonic()))
        finally:
            stop.set()  # a consumer that stopped early (Ctrl-C): the followers stop at their next line

    def _trial(self, job_id: str, run: str) -> SlurmJob:
        return SlurmJob(self._shell, job_id, run, cluster=self.region, workdir=self.project, sleep=self._sleep)

    def _trial_runs(self) -> list[tuple[int, str, str, bool]]:
        """(number, Slurm id, run folder, whether the journal has it RUNNING) of each trial that started."""
        return [
            (t.number, t.user_attrs["job_id"], t.user_attrs["output_dir"], t.state.name == "RUNNING")
            for t in self.trials() or []
            if t.user_attrs.get("job_id") and t.user_attrs.get("output_dir")
        ]


def _labelled(number: int, lines: Iterator[LogLine]) -> Iterator[LogLine]:
    """A trial's lines, each labelled ``tNNN/<its replica>``."""
    for line in lines:
        yield dataclasses.replace(line, replica=f"t{number:03d}/{line.replica}")


def cluster_shell(region: str | None) -> tuple[ClusterShell, str]:
    region = region or cluster_of("")
    return ClusterShell("" if region == cluster_of("") else region), region
