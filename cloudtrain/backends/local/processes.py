"""Replica processes: start them, merge their output live, stop them all, leave no orphan.

Each replica runs in its own session, so stopping it signals its whole group (SIGTERM, a grace, SIGKILL); on Linux
``PR_SET_PDEATHSIG`` also kills it if cloudtrain is killed outright. One reader thread per replica turns its
output into :class:`LogLine` and copies it to its log file; a monitor thread stops the others at the first failure.
stdout and stderr are two pipes, each with its own partial line, so a progress bar without its newline yet is never
joined to a line of the other stream; the price is that within a burst the two streams interleave in read order,
as in the clouds, whose log agents read them apart."""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import datetime as dt
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, overload

from cloudtrain.backends.base import LogLine
from cloudtrain.backends.local.severity import severity_of
from cloudtrain.errors import BackendError, ExitCode
from cloudtrain.following.setup_lines import CLOUDTRAIN_REPLICA
from cloudtrain.leftovers import process_start
from cloudtrain.statefiles import open_append

NOTICE = CLOUDTRAIN_REPLICA  # the replica name of cloudtrain's own lines
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Launch:
    name: str
    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: str
    log_path: Path


@dataclass(frozen=True)
class Outcome:
    exit_codes: Mapping[str, int]  # negative: killed by that signal
    failed: str | None  # the first replica that exited non-zero on its own
    cancelled: bool
    timed_out: bool
    preempted: str | None = None  # the first replica that saved and exited ExitCode.PREEMPTED on its own


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """``n`` distinct ports that were free a moment ago (all held open together while picked)."""
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(n)]
        for s in socks:
            s.bind((host, 0))
        return [s.getsockname()[1] for s in socks]


def _pdeathsig() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    prctl = libc.prctl

    def set_pdeathsig() -> None:  # runs in the child, between fork and exec
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    return set_pdeathsig


class ReplicaGroup:
    """The running replicas of one job. Lines are kept in order of arrival for any reader."""

    def __init__(
        self,
        launches: Sequence[Launch],
        *,
        stop_grace_s: float = 10.0,
        max_runtime_s: float | None = None,
        on_line: Callable[[LogLine], None] | None = None,
        poll_s: float = 0.05,
        journal: Path | None = None,
        mask: Callable[[str], str] | None = None,
    ):
        self._launches = list(launches)
        self._mask = mask
        self._grace = stop_grace_s
        self._max_runtime = max_runtime_s
        self._on_line = on_line
        self._poll = poll_s
        self._journal = None  # every line in order of arrival, with its time: `logs` of a finished run
        if journal is not None:
            journal.parent.mkdir(parents=True, exist_ok=True)
            self._journal = open_append(journal, "a", encoding="utf-8")  # never through a link
        self._lines: list[LogLine] = []
        self._cond = threading.Condition()
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._codes: dict[str, int] = {}
        self._failed: str | None = None
        self._preempted: str | None = None
        self._cancel = threading.Event()
        self._kill_now = threading.Event()
        self._done = threading.Event()
        self._outcome: Outcome | None = None
        self._readers: list[threading.Thread] = []
        self._logs: dict[str, IO[bytes]] = {}
        self._starts: dict[str, int | None] = {}
        self.started = time.monotonic()
        self.ended: float | None = None

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start every replica, then the threads (no thread exists while forking)."""
        preexec = _pdeathsig()
        try:  # every log file first: one that is a link stops the run before any replica starts
            for launch in self._launches:
                launch.log_path.parent.mkdir(parents=True, exist_ok=True)
                self._logs[launch.name] = open_append(launch.log_path, "ab", buffering=0)
        except BaseException:
            for log in self._logs.values():
                log.close()
            if self._journal is not None:
                self._journal.close()
            raise
        for launch in self._launches:
            Path(launch.cwd).mkdir(parents=True, exist_ok=True)
            try:
                self._procs[launch.name] = subprocess.Popen(
                    list(launch.argv),
                    env=dict(launch.env),
                    cwd=launch.cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    preexec_fn=preexec,
                )
            except OSError as exc:
                self._kill_all(grace=0)
                for log in self._logs.values():
                    log.close()
                raise BackendError(f"cannot start replica {launch.name}: {exc}") from None
            self._starts[launch.name] = process_start(self._procs[launch.name].pid)  # pid + start: this process
        _RUNNING.add(self)
        self.started = time.monotonic()
        for launch in self._launches:
            reader = threading.Thread(target=self._read, args=(launch,), name=f"read-{launch.name}", daemon=True)
            reader.start()
            self._readers.append(reader)
        threading.Thread(target=self._monitor, name="replica-monitor", daemon=True).start()

    def cancel(self) -> Outcome:
        """SIGTERM to every replica (a trainer saves a checkpoint and exits), SIGKILL after the grace period."""
        self._cancel.set()
        return self.wait()

    def kill(self) -> Outcome:
        """Cut a cancel's grace period short: SIGKILL every replica now."""
        self._kill_now.set()
        self._cancel.set()
        return self.wait()

    @overload
    def wait(self) -> Outcome: ...
    @overload
    def wait(self, timeout: float) -> Outcome | None: ...
    def wait(self, timeout: float | None = None) -> Outcome | None:
        """The outcome once every replica has exited (the monitor sets it before it says done); with a
        ``timeout``, None if they still run."""
        self._done.wait(timeout)
        return self._outcome

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def pids(self) -> dict[str, int]:
        return {name: p.pid for name, p in self._procs.items()}

    @property
    def starts(self) -> dict[str, int | None]:
        """When each replica started (:func:`~cloudtrain.leftovers.process_start`): with its pid, the one
        process a ``cancel`` from another cloudtrain may signal."""
        return dict(self._starts)

    def exit_codes(self) -> dict[str, int | None]:
        return {name: self._codes.get(name) for name in self._procs}

    # --- output ----------------------------------------------------------------------------

    def notice(self, message: str, severity: str = "INFO") -> None:
        self._add(NOTICE, message, severity)

    def lines(self, follow: bool = False) -> Iterator[LogLine]:
        """Every line so far; with ``follow``, new ones as they come until all replicas ended."""
        seen = 0
        while True:
            with self._cond:
                while follow and seen >= len(self._lines) and not self._done.is_set():
                    self._cond.wait(0.5)
                batch, finished = self._lines[seen:], self._done.is_set()
                seen += len(batch)
            yield from batch
            if not follow or (finished and not batch):
                return

    def _add(self, replica: str, text: str, severity: str) -> None:
        """One line, stamped under the lock that orders the lines: the lines file is in time order
        even when two replicas' readers race (a stamp taken before the lock let a later line in first)."""
        with self._cond:
            line = LogLine(dt.datetime.now(dt.timezone.utc), replica, text, severity)
            if self._on_line is not None:  # before any reader can see the line (its events are known then)
                self._on_line(line)
            self._lines.append(line)
            if self._journal is not None:
                entry = dict(timestamp=line.timestamp.isoformat(), replica=replica, severity=severity, message=text)
                try:
                    self._journal.write(json.dumps(entry) + "\n")
                    self._journal.flush()
                except (OSError, ValueError):  # a full disk (or a closed journal) must not stop the run
                    pass
            self._cond.notify_all()

    def _read(self, launch: Launch) -> None:
        stdout, stderr = self._procs[launch.name].stdout, self._procs[launch.name].stderr
        assert stdout is not None and stderr is not None  # start opens both pipes
        # the secret values this run knows (and any credential, every line of a private key) never reach a log
        # or the screen: a ValueMasker's stream() also masks the lines after a key's first one
        stream = getattr(self._mask, "stream", None)
        mask = stream() if stream is not None else self._mask
        with self._logs[launch.name] as log:
            for raw in _whole_lines(stdout, stderr):
                if mask is not None:
                    raw = mask(raw.decode("utf-8", errors="replace")).encode("utf-8")
                try:
                    log.write(raw)
                except OSError:  # a full disk must not stop the draining of the pipes
                    pass
                text = raw.decode("utf-8", errors="replace").rstrip("\r\n").rsplit("\r", 1)[-1]
                self._add(launch.name, text, severity_of(text))
        stdout.close()
        stderr.close()

    # --- exits and stopping ----------------------------------------------------------------

    def _monitor(self) -> None:
        try:
            reason = self._watch_exits()
        except BaseException as exc:  # never leave wait() hanging, nor replicas running
            self.notice(f"cloudtrain lost track of the replicas ({exc!r}); stopping them", "ERROR")
            self._kill_all(grace=0)
            for name, proc in self._procs.items():
                self._codes.setdefault(name, proc.returncode if proc.returncode is not None else -9)
            reason = "failed"
            self._failed = self._failed or next(iter(self._procs))
        self._kill_all(grace=0)  # what the replicas left behind in their groups
        for reader in self._readers:
            reader.join(timeout=5)
        self.ended = time.monotonic()
        self._outcome = Outcome(
            exit_codes=dict(self._codes),
            failed=self._failed,
            cancelled=reason == "cancelled",
            timed_out=reason == "timeout",
            preempted=self._preempted if reason == "preempted" else None,
        )
        _RUNNING.discard(self)
        with self._cond:
            if self._journal is not None:
                self._journal.close()
                self._journal = None
            self._done.set()
            self._cond.notify_all()

    def _watch_exits(self) -> str | None:
        """Record exits until every replica has ended; returns why they were stopped, if they were."""
        reason: str | None = None  # failed, preempted, cancelled, timeout
        while len(self._codes) < len(self._procs):
            for name, proc in self._procs.items():
                code = proc.poll()
                if code is None or name in self._codes:
                    continue
                self._codes[name] = code
                others = "; stopping the others" if len(self._procs) > 1 else ""  # one replica: no others
                if code == ExitCode.PREEMPTED and reason is None and self._preempted is None:
                    self._preempted = name  # saved on a SIGTERM that did not come from us
                    self.notice(f"replica {name} saved a checkpoint and exited {code} (preempted){others}", "WARNING")
                elif code != 0 and reason is None and self._failed is None:
                    self._failed = name
                    self.notice(f"replica {name} exited with code {code}{others}", "ERROR")
            if reason is None:
                if self._failed is not None:
                    reason = "failed"
                elif self._preempted is not None:
                    reason = "preempted"
                elif self._cancel.is_set():
                    reason = "cancelled"
                    self.notice(
                        f"stopping: SIGTERM to every replica; SIGKILL after {self._grace:g} s or on a second Ctrl-C",
                        "WARNING",
                    )
                elif self._max_runtime and time.monotonic() - self.started > self._max_runtime:
                    reason = "timeout"
                    self.notice(f"max_runtime of {self._max_runtime:.0f}s reached: stopping every replica", "ERROR")
                if reason is not None and len(self._codes) < len(self._procs):
                    self._kill_all(self._grace)
            time.sleep(self._poll)
        return reason

    def _kill_all(self, grace: float) -> None:
        """SIGTERM every replica's process group, wait up to ``grace`` seconds, then SIGKILL."""
        procs = list(self._procs.values())
        for proc in procs:
            _signal_group(proc.pid, signal.SIGTERM if grace > 0 else signal.SIGKILL)
        deadline = time.monotonic() + grace
        while grace > 0 and time.monotonic() < deadline and any(p.poll() is None for p in procs):
            if self._kill_now.is_set():
                self.notice("killing every replica now", "WARNING")
                break
            time.sleep(self._poll)
        for proc in procs:
            _signal_group(proc.pid, signal.SIGKILL)
        for proc in procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


_MAX_PARTIAL = 1 << 20  # a "line" that never ends is passed on in pieces of this size


def _whole_lines(*pipes: IO[bytes]) -> Iterator[bytes]:
    """The lines of several pipes in the order their newlines arrive, each pipe's partial line kept
    apart until it ends; what is left when a pipe closes comes last, with a newline added."""
    partial = {pipe.fileno(): b"" for pipe in pipes}
    with selectors.DefaultSelector() as selector:
        for pipe in pipes:
            selector.register(pipe.fileno(), selectors.EVENT_READ)
        while partial:
            for key, _ in selector.select():
                fd = key.fd
                chunk = os.read(fd, 65536)
                if not chunk:
                    selector.unregister(fd)
                    rest = partial.pop(fd)
                    if rest:
                        yield rest + b"\n"
                    continue
                lines = (partial[fd] + chunk).split(b"\n")
                partial[fd] = lines.pop()
                for line in lines:
                    yield line + b"\n"
                if len(partial[fd]) > _MAX_PARTIAL:
                    yield partial[fd] + b"\n"
                    partial[fd] = b""


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


_RUNNING: weakref.WeakSet[ReplicaGroup] = weakref.WeakSet()


@atexit.register
def _kill_leftovers() -> None:
    """An interpreter that exits without cancelling its jobs takes their replicas with it."""
    for group in list(_RUNNING):
        group._kill_all(grace=0)
