"""A local job's handle: its replicas' lines and state, and the end-of-run summary it records."""

from __future__ import annotations

import atexit
import datetime as dt
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cloudtrain.backends import outputs
from cloudtrain.backends.base import HandleDefaults, JobState, JobStatus, LogLine
from cloudtrain.backends.files import JobFiles, LocalFolder
from cloudtrain.backends.local import record
from cloudtrain.backends.local.diagnose import failure_hint, installed
from cloudtrain.backends.local.processes import Launch, Outcome, ReplicaGroup
from cloudtrain.backends.local.record import RUN_DIR as RUN_DIR  # cli/sweep.py's one lazy import takes it from here
from cloudtrain.backends.runner import venv
from cloudtrain.backends.runner.contract import contract_of
from cloudtrain.errors import UsageError
from cloudtrain.history import RUNS_DIR as RUNS_DIR  # the backend takes it from here
from cloudtrain.leftovers import process_start
from cloudtrain.spec import JobSpec
from cloudtrain.statefiles import (
    Damage,
    NotRegular,
    load_json_object,
    open_append,
    read_regular,
    scan_json_lines,
    write_atomic,
)
from cloudtrain.text.numbers import seconds

if TYPE_CHECKING:
    from cloudtrain.backends.runner.contract import ReplicaPlan

log = logging.getLogger("cloudtrain.local")
JOURNAL = "lines.jsonl"  # every line of every replica in order of arrival, with its time and severity
CANCEL_REQUESTED = "cancel-requested"  # in RUN_DIR: `cloudtrain cancel` from another process asked for the stop
EVENT_PREFIX = '{"event"'

# The local backend's own states, mapped through one table.
STATES = {native: JobState(state) for native, state in record.NATIVE.items()}


# The environment is ready before a local run starts: until its code's first line it imports TensorFlow (20-30 s)
FIRST_PHASE = "starting TensorFlow"


class LocalJob(HandleDefaults):
    """A running local job: the replicas, their merged lines, and the end-of-run summary."""

    backend_name = "local"
    stops_gracefully = True  # cancel: SIGTERM and a checkpoint; kill: every replica at once

    def __init__(
        self,
        spec: JobSpec,
        out: Path,
        plans: Iterable[ReplicaPlan],
        environment: venv.PackageEnv,
        *,
        note: str | None,
        stop_grace_s: float,
        masker: Callable[[str], str] | None = None,
        owner_pid: int | None = None,
    ):
        """``owner_pid``: the detached run's supervisor (None: this process, which the replicas die with)."""
        self.spec = spec
        self._owner = owner_pid
        self._owner_start = process_start(owner_pid) if owner_pid is not None else None
        self._root = contract_of(spec).machine_root  # a fixed folder of the target's machines, if it has one
        self._masker = masker  # hides the secret values this run knows in its lines
        self.job_id = spec.job_name
        self.output_dir = out
        self.plans = list(plans)
        self.environment = environment
        self._note = note
        self._chief = self.plans[0]
        self._events: dict[str, dict[str, Any]] = {}  # last "epoch" / "done" / "preempted" event of the chief
        self._created = dt.datetime.now(dt.timezone.utc)
        self._ended: dt.datetime | None = None
        self._final: JobStatus | None = None
        self._group: ReplicaGroup | None = None
        self._grace = stop_grace_s
        self._lock = threading.Lock()
        self._exited = False  # stopped because the process that started it exits

    def _start(self, launches: list[Launch]) -> None:
        self._started_at = time.time() - 1  # file mtimes can be a little behind the clock
        self._root_before = self._root is not None and os.path.exists(self._root.path)
        group = ReplicaGroup(
            launches,
            stop_grace_s=self._grace,
            max_runtime_s=self.spec.max_runtime_seconds,
            on_line=self._watch,
            journal=self.output_dir / RUN_DIR / JOURNAL,
            mask=self._masker,
        )
        env = self.environment
        how = (
            "reused"
            if env.cached
            else f"reused, the package's code installed in {seconds(env.setup_seconds)}"
            if env.code_only
            else f"built in {seconds(env.setup_seconds)}"
        )
        replicas = f"{len(launches)} replica" + ("s" if len(launches) != 1 else "")
        image = f"{env.description}, " if env.description else ""
        group.notice(f"{self.spec.cloud} contract, {replicas}; environment {image}{env.path} ({how})")
        group.notice(f"output: {self.output_dir}")
        if self._note:
            group.notice(self._note, "WARNING")
        self._group = group
        group.start()
        self._record(self._status())
        atexit.register(self._end_with_this_process)

    def _end_with_this_process(self) -> None:
        """At this interpreter's exit (a script that submitted and returned, or a Ctrl-C that ended it) the
        replicas would die with it unrecorded: the run is stopped as ``cancel`` stops it and recorded CANCELLED
        with its real wall time (a second Ctrl-C: killed). A run meant to go on is detached (``--detach``)."""
        if self._final is not None or self._group is None:
            return
        self._exited = True
        try:
            self.cancel()
        except KeyboardInterrupt:
            self.kill()

    def _watch(self, line: LogLine) -> None:
        if line.replica == self._chief.name and line.message.startswith(EVENT_PREFIX):
            try:
                event = json.loads(line.message)
            except ValueError:
                return
            if isinstance(event, dict) and event.get("event") in ("plan", "epoch", "done", "preempted"):
                self._events[event["event"]] = event

    @property
    def saves_on_stop(self) -> bool:
        """Whether a stop (SIGTERM) leaves a checkpoint to resume from, as far as this run shows: the
        bundled trainer announced itself (its ``plan`` line; it saves on SIGTERM), or a checkpoint is
        there already. A user's package that did neither is told as that, not as a save in progress."""
        return "plan" in self._events or latest_checkpoint(Path(self._chief.checkpoint_dir)) is not None

    # --- JobHandle -------------------------------------------------------------------------

    @property
    def _replicas(self) -> ReplicaGroup:
        """The running replicas: ``_start`` sets them before the backend hands the job out."""
        if self._group is None:
            raise ValueError(f"local run {self.job_id} was never started")
        return self._group

    def status(self) -> JobStatus:
        if self._final is not None:
            return self._final
        if self._replicas.done:
            return self._finish(self._replicas.wait())
        return self._status()

    def files(self) -> JobFiles:
        return run_files(self.status(), self.output_dir)

    def logs(self, follow: bool = False, drain: float | None = None) -> Iterator[LogLine]:
        return self._replicas.lines(follow)  # local output is complete when the processes exit: no drain

    def wait(self) -> JobStatus:
        return self.status() if self._final else self._finish(self._replicas.wait())

    def cancel(self) -> JobStatus:
        """SIGTERM to every replica: the trainer saves a checkpoint and exits; SIGKILL after the grace period."""
        return self.status() if self._final else self._finish(self._replicas.cancel())

    def kill(self) -> JobStatus:
        """A second Ctrl-C: SIGKILL every replica now."""
        return self.status() if self._final else self._finish(self._replicas.kill())

    # --- summary ---------------------------------------------------------------------------

    def _status(self, native: str = "running", outcome: Outcome | None = None) -> JobStatus:
        group = self._replicas
        codes = outcome.exit_codes if outcome else group.exit_codes()
        wall = (group.ended if group.ended is not None else time.monotonic()) - group.started
        details: dict[str, Any] = {
            "wall_time_s": round(wall, 3),
            "metrics": self._metrics(),
            "model_dir": self._chief.model_dir,
            "checkpoint_dir": self._chief.checkpoint_dir,
            "tensorboard_dir": self._chief.tensorboard_dir,
            "exit_codes": dict(codes),
            "output_dir": str(self.output_dir),
            "logs_dir": str(self.output_dir / RUN_DIR),
            "contract": self.spec.cloud,
            "replicas": [p.name for p in self.plans],
            "environment": str(self.environment.path),
            "environment_cached": self.environment.cached,
            "environment_setup_s": round(self.environment.setup_seconds, 3),
            "uploads_outputs": False,  # it writes to local folders: its done event starts no upload phase
        }
        if outcome is None:
            details["pids"] = group.pids  # for attach/cancel from another process while it runs
            details["pid_starts"] = group.starts  # with the pids: which processes are this run's (never another's)
            if self._owner is not None:
                details["owner_pid"] = self._owner  # a detached run: alive while it is, and cancel signals it
                details["owner_start"] = self._owner_start
        metrics_file = self._metrics_file()
        if metrics_file:
            details["metrics_file"] = str(metrics_file)
        warnings = self._warnings(native, outcome)
        if warnings:
            details["warnings"] = warnings
        message = None if outcome is None else self._outcome(native, outcome, details)
        return JobStatus(
            job_id=self.job_id,
            name=str(self.output_dir),
            state=STATES[native],
            native_state=native,
            message=message,
            created=self._created,
            ended=self._ended,
            details=details,
            first_phase=FIRST_PHASE,
            phase=FIRST_PHASE if outcome is None else None,  # until its first line says more (the live line)
            replica_count=len(self.plans),
            output_dir=details["output_dir"],
            checkpoint_dir=details["checkpoint_dir"],
        )

    def _warnings(self, native: str, outcome: Outcome | None) -> list[str]:
        """The run's note, and once it ended: files it wrote outside its tree, an empty model folder."""
        warnings = [self._note] if self._note else []
        root = self._root
        if outcome is not None and root is not None and not self._root_before and os.path.exists(root.path):
            warnings.append(
                f"the job wrote to {root.path} on this machine, outside its local tree: the trainer does not "
                f"read {root.variable}; a later run may resume from those files (remove {root.path})"
            )
        if outcome is not None and native == "succeeded":
            empty = outputs.empty_model_dir_warning(
                self._chief.model_dir,
                [str(self.output_dir)] + ([root.path] if root is not None else []),
                since=self._started_at,
                skip=[self._chief.tensorboard_dir],
                contract=self.spec.cloud,
            )
            if empty:
                warnings.append(empty)
        return warnings

    def _outcome(self, native: str, outcome: Outcome, details: dict[str, Any]) -> str | None:
        """The ended run's message (which replica failed and why, what was saved), its details filled in."""
        message = None
        details["exit_code"] = int(STATES[native].exit_code)  # the CLI's; the replicas' own are in exit_codes
        saved = self._saved()
        if saved:
            details["saved"] = saved
        what = (
            f"checkpoint at step {saved['step']} saved: {saved['checkpoint']}"
            if saved and saved.get("step") is not None
            else "no checkpoint saved"
        )
        if outcome.failed:
            details["failed_replica"] = outcome.failed
            message = f"replica {outcome.failed} {_ended(outcome.exit_codes[outcome.failed])}"
            log = _read(self.output_dir / RUN_DIR / f"{outcome.failed}.log")
            hint = failure_hint(
                log,
                self.spec.tensorflow_version,
                self.spec.cloud,
                installed(self.environment.python),
                outcome.exit_codes[outcome.failed],
                passed_model_dir=bool(self.spec.package.script and self.spec.model_dir),
            )
            if hint:
                message += f"; {hint}"
        elif native == "timed_out":
            message = f"stopped after max_runtime ({self.spec.max_runtime_seconds}s)"
        elif native == "cancelled":
            why = " as the Python process that started it exited (detach it to keep it running)"
            message = f"cancelled{why if self._exited else ''}; {what}"
        elif native == "preempted":
            details["preempted_replica"] = outcome.preempted
            message = f"preempted (replica {outcome.preempted} got SIGTERM from outside cloudtrain); {what}"
        return message

    def _finish(self, outcome: Outcome) -> JobStatus:
        with self._lock:
            if self._final is not None:
                return self._final
            native = (
                "failed"
                if outcome.failed
                else "timed_out"
                if outcome.timed_out
                else "cancelled"
                if outcome.cancelled or (outcome.preempted and (self.output_dir / RUN_DIR / CANCEL_REQUESTED).exists())
                else "preempted"
                if outcome.preempted
                else "succeeded"
            )
            self._ended = dt.datetime.now(dt.timezone.utc)
            self._final = self._status(native, outcome)
            self._record(self._final)
            return self._final

    def _saved(self) -> dict[str, Any] | None:
        """What a stop left to resume from: the chief's ``preempted`` line, else the newest ``ckpt-<step>``."""
        event = self._events.get("preempted")
        if event and event.get("checkpoint"):
            return {"step": event.get("step"), "checkpoint": event["checkpoint"], "source": "saved on SIGTERM"}
        newest = latest_checkpoint(Path(self._chief.checkpoint_dir))
        return (
            {"step": newest[0], "checkpoint": str(newest[1]), "source": "last periodic checkpoint"} if newest else None
        )

    def _metrics_file(self) -> Path | None:
        model = Path(self._chief.model_dir)
        for candidate in (model / "metrics.json", *sorted(model.glob("*/metrics.json"))):
            if candidate.is_file():
                return candidate
        return None

    def _metrics(self) -> dict[str, Any]:
        """The chief's final numbers: its ``done`` line, else metrics.json, else its last epoch line."""
        source = self._events.get("done")
        if source is None and (path := self._metrics_file()) is not None:
            try:
                source = json.loads(path.read_text())
            except (OSError, ValueError):
                source = None
        if source is None:
            source = self._events.get("epoch", {})
        return {k: v for k, v in source.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}

    def _record(self, status: JobStatus) -> None:
        write_atomic(self.output_dir / RUN_DIR / "status.json", json.dumps(status.to_dict(), indent=2, default=str))


def _ended(code: int) -> str:
    """``exited with code 3`` or ``was killed by SIGKILL``: the replica's own ending, in words."""
    if code >= 0:
        return f"exited with code {code}"
    try:
        return f"was killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"was killed by signal {-code}"


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def latest_checkpoint(directory: Path) -> tuple[int, Path] | None:
    """The bundled trainer's newest complete checkpoint (``ckpt-<step>/ckpt``) in a local directory."""
    found = []
    try:
        for entry in directory.iterdir():
            if entry.is_dir() and entry.name.startswith("ckpt-") and entry.name[5:].isdigit():
                found.append((int(entry.name[5:]), entry / "ckpt"))
    except OSError:
        return None
    return max(found) if found else None


def run_files(status: JobStatus, output_dir: Path) -> JobFiles:
    """A local run's files: its output folder (model, checkpoints, event files, the replicas' logs in
    ``local-run/``), read in place; its event files where its chief wrote them."""
    if not output_dir.is_dir():
        return JobFiles({}, gone=f"its run folder {output_dir} is gone")
    board = status.details.get("tensorboard_dir")
    real, root = os.path.realpath(board or output_dir), os.path.realpath(output_dir)
    why = None if board else f"run {status.job_id} recorded no TensorBoard folder"
    if board and Path(board).is_relative_to(output_dir) and not Path(real).is_relative_to(root):
        board, why = None, f"its event folder is a link to {real}, outside its run folder {output_dir}: not followed"
    hosts = status.details.get("replicas") or []
    inputs = (f"{RUN_DIR}/data", f"{RUN_DIR}/shards", *(f"{h}/input/data" for h in hosts))
    return JobFiles(
        {"output": LocalFolder(output_dir, skip=inputs)},  # the data channels' links (either contract's): inputs
        LocalFolder(board) if board else None,
        no_tensorboard=why,
        running=not status.state.terminal,
    )


class RecordedJob(HandleDefaults):
    """A local run seen through its ``status.json`` and log files (``attach`` / ``list_jobs``).

    :meth:`recorded` never raises: a damaged ``status.json`` is an UNKNOWN status naming the file and the fix.
    :meth:`status` and :meth:`cancel` raise that line as a :class:`StateError` (exit 2); :meth:`logs` raises it
    after every line it finds."""

    backend_name = "local"
    poll_s = 0.2  # how often a follower looks at the run's files

    def __init__(self, status_path: Path):
        self._path = status_path
        data = load_json_object(status_path, inside=status_path.parent.parent)
        known = data.get("job_id") if isinstance(data, dict) else None
        self.job_id = str(known) if known else status_path.parent.parent.name  # damaged: status() says how

    @property
    def output_dir(self) -> Path:
        return self._path.parent.parent

    def read(self) -> JobStatus | Damage:
        """The run's status, or the :class:`Damage` of its ``status.json`` (never raises)."""
        data = record.load(self._path, inside=self.output_dir)
        if isinstance(data, Damage):
            return data
        try:
            return self._parse(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return Damage(self._path, f"damaged ({type(exc).__name__}: {exc})", record.recover(self._path))

    def recorded(self) -> JobStatus:
        """The run's status for a listing; when the file is damaged, UNKNOWN (``details["damaged"]``:
        file, problem, recover) and one warning line saying so."""
        found = self.read()
        if not isinstance(found, Damage):
            return found
        found.warn()
        return JobStatus(
            job_id=self.job_id,
            name=str(self._path.parent.parent),
            state=JobState.UNKNOWN,
            native_state="unknown",
            message=found.line(),
            details={"damaged": found.to_dict()},
        )

    def status(self) -> JobStatus:
        found = self.read()
        if isinstance(found, Damage):
            raise found.error()
        return found

    def files(self) -> JobFiles:
        return run_files(self.status(), self.output_dir)

    def _parse(self, data: dict[str, Any]) -> JobStatus:
        data = record.rebased(data, self.output_dir)  # a moved project's run: its paths where they are now
        recorded, native = data["native_state"], record.native_state(data)  # checked by record.load
        details = data.get("details") or {}
        created, ended = (dt.datetime.fromisoformat(data[k]) if data.get(k) else None for k in ("created", "ended"))
        if native == "running" and created:  # recorded at its start: its wall time so far
            details = {**details, "wall_time_s": round(max(time.time() - created.timestamp(), 0.0), 3)}
        owner = [pid for pid, _ in record.owner(details)]
        ended_unrecorded = (
            f"the process that ran it (pid {owner[0]}) ended without recording how the run ended (was it killed?); "
            f"its replicas' lines are in {self._path.parent}"
            if owner
            else "the run ended without a summary"
        )
        return JobStatus(
            job_id=str(data.get("job_id") or self.job_id),
            name=str(data.get("name") or self._path.parent.parent),
            state=STATES[native],
            native_state=native,
            message=data.get("message") or (ended_unrecorded if native != recorded else None),
            created=created,
            ended=ended,
            details=details,
            first_phase=FIRST_PHASE,
            phase=FIRST_PHASE if native == "running" else None,
            output_dir=details.get("output_dir") or None,  # the typed fields, as this run's status file keeps them
            checkpoint_dir=details.get("checkpoint_dir") or None,
            replica_count=len(details.get("replicas") or []) or None,
        )

    def logs(self, follow: bool = False, drain: float | None = None) -> Iterator[LogLine]:
        """Every line as it was printed live, interleaved by time, each with its own time and severity.

        A damaged lines file is one warning, then the replicas' own log files one after the other. A damaged
        ``status.json`` is raised after every line found was yielded."""
        found = self.read()
        journal = self._path.parent / JOURNAL
        followable = journal.is_file() and not journal.is_symlink()  # a link is read (and refused) below
        if follow and isinstance(found, JobStatus) and not found.state.terminal and followable:
            yield from self._follow(journal)
            return
        lines, garbled = read_lines_file(journal, inside=self.output_dir)
        if garbled is None and not lines and journal.is_file():  # every run writes cloudtrain's own lines there
            garbled = Damage(journal, "holds no lines", "the replicas' own log files hold the same lines")
        if garbled is not None:
            garbled.warn(then=f"showing the replicas' own log files in {self._path.parent}")
        if lines and garbled is None:
            yield from lines
        else:  # damaged, or empty (emptied by hand, or a run that printed nothing): the replicas' own files
            yield from self._replica_logs(found)
        if isinstance(found, Damage):
            raise found.error()

    def _follow(self, journal: Path) -> Iterator[LogLine]:
        """The lines file as it grows, each whole line once, until the run has ended (read
        before each look at the file, so that the last look sees every line). Damaged lines are
        skipped: ``logs`` without ``--follow`` names them."""
        offset = 0
        while True:
            found = self.read()
            with open(journal, "rb") as lines:
                lines.seek(offset)
                chunk = lines.read()
            whole = chunk[: chunk.rfind(b"\n") + 1]  # a line still being written waits for the next look
            offset += len(whole)
            for raw in whole.splitlines():
                line = _log_line(raw)
                if line is not None:
                    yield line
            if isinstance(found, Damage):
                raise found.error()
            if found.state.terminal:
                return
            time.sleep(self.poll_s)

    def _replica_logs(self, found: JobStatus | Damage) -> Iterator[LogLine]:
        folder = self._path.parent
        names = sorted(p.stem for p in folder.glob("*.log"))
        if isinstance(found, JobStatus):
            names = list(found.details.get("replicas") or []) or names
        for name in names:
            log_file = folder / f"{name}.log"
            try:
                raw = read_regular(log_file, inside=self.output_dir)
            except FileNotFoundError:
                continue
            except OSError as exc:
                Damage(
                    log_file,
                    str(exc) if isinstance(exc, NotRegular) else f"cannot be read ({exc})",
                    "its lines are not shown",
                ).warn()
                continue
            stamp = dt.datetime.fromtimestamp(log_file.stat().st_mtime, dt.timezone.utc)
            for text in raw.decode("utf-8", errors="replace").splitlines():
                yield LogLine(stamp, name, text)

    def wait(self, poll_s: float | None = None) -> JobStatus:
        while not (status := self.status()).state.terminal:
            time.sleep(self.poll_s if poll_s is None else poll_s)
        return status

    def cancel(self) -> JobStatus:
        """Stop a run started by another cloudtrain process: a detached run's supervisor gets SIGTERM and
        stops the replicas as Ctrl-C does; else the replicas' process groups are signalled."""
        status = self.status()
        doubtful = record.unproven(status.details)
        if doubtful:
            raise UsageError(
                f"run {status.job_id}: its status.json names pid {', '.join(map(str, doubtful))} without the start "
                "time that proves it is the run's; nothing was signalled",
                hint=f"if it is the run's, stop it yourself: kill {' '.join(map(str, doubtful))}",
            )
        if status.state is JobState.RUNNING:
            open_append(self._path.parent / CANCEL_REQUESTED).close()  # the owner records CANCELLED, not PREEMPTED
            for owner, start in record.owner(status.details):
                if record.ours(owner, start, leader=False):  # pid and start time: never a process that reused it
                    try:
                        os.kill(owner, signal.SIGTERM)
                    except (ProcessLookupError, PermissionError):
                        pass  # it has just ended: the status below says how
                return self.status()
            for pid, start in record.pids(status.details):
                if record.ours(pid, start, environment=status.details.get("environment")):
                    try:
                        os.killpg(pid, signal.SIGTERM)
                    except (ProcessLookupError, PermissionError):
                        pass
        return self.status()


def read_lines_file(path: Path, *, inside: Path | None = None) -> tuple[list[LogLine], Damage | None]:
    """A run's lines file (``lines.jsonl``): its lines, and the :class:`Damage` of its bad ones (or None)."""
    found, damage = scan_json_lines(path, check=_line_problem, inside=inside)
    lines = [_entry_line(d) for _, d in found]
    if damage is not None:
        damage = Damage(path, damage.problem, "the replicas' own log files hold the same lines")
    return lines, damage


def _line_problem(entry: dict[str, Any]) -> str | None:
    missing = [k for k in ("timestamp", "replica", "message", "severity") if not isinstance(entry.get(k), str)]
    if missing:
        return f"no {', '.join(missing)}"
    try:
        dt.datetime.fromisoformat(entry["timestamp"])
    except ValueError:
        return "timestamp is not a time"
    return None


def _log_line(raw: bytes) -> LogLine | None:
    """One line of a lines file, or None when it is damaged."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(entry, dict) or _line_problem(entry):
        return None
    return _entry_line(entry)


def _entry_line(entry: dict[str, Any]) -> LogLine:
    return LogLine(dt.datetime.fromisoformat(entry["timestamp"]), entry["replica"], entry["message"], entry["severity"])
