"""TensorBoard on this machine over runs' event files (``cloudtrain tensorboard JOB…``), each job's mirrored into the
cache (:class:`Mirror`); the server runs in its own process group and gets SIGTERM however cloudtrain dies."""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cloudtrain.app.locate import locate
from cloudtrain.app.mirror import Mirror
from cloudtrain.backends.base import JobHandle
from cloudtrain.errors import BackendError, MissingExtra, UsageError
from cloudtrain.history import cache_dir
from cloudtrain.leftovers import process_argv, process_start
from cloudtrain.statefiles import read_json_object, write_atomic

log = logging.getLogger("cloudtrain.tensorboard")

DEFAULT_PORT = 6006
REFRESH_S = 15.0  # one listing per running cloud job every 15 s: 4 a minute (bench/tensorboard_sync_bench.py)
START_TIMEOUT_S = 180.0  # TensorBoard's first start imports its plugins: seconds on a busy machine

#: TensorBoard's own entry point, told TensorFlow is not needed (importing it would add seconds to every start).
_LAUNCH = (
    "import sys, types; sys.modules['tensorboard.compat.notf'] = types.ModuleType('tensorboard.compat.notf'); "
    "sys.argv[0] = 'tensorboard'; from tensorboard.main import run_main; run_main()"
)


@dataclass
class BoardRun:
    """One job's run in TensorBoard: its name there, the handle, the folder TensorBoard reads."""

    name: str
    job_id: str
    handle: JobHandle
    logdir: Path
    source: str  # where the event files are (a path, gs://…, s3://…, login:/path)
    mirror: Mirror | None = None  # None: read in place
    running: bool = False

    def refresh(self) -> None:
        """Copy what is new; after the job ended, one last time and never again."""
        if self.mirror is None or not self.running:
            return
        try:
            self.running = not self.handle.status().state.terminal
            self.mirror.sync()
        except Exception as exc:  # a cloud out of reach for a moment: TensorBoard shows what is there
            log.warning("warning: %s: could not refresh its event files (%s)", self.name, exc)


@dataclass
class Board:
    """A running TensorBoard: its ``url`` and ``runs``; :meth:`stop` ends it (and the refreshes)."""

    url: str
    port: int
    runs: list[BoardRun]
    process: subprocess.Popen[bytes]
    refresh_s: float
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start_refreshing(self) -> None:
        if any(run.mirror is not None and run.running for run in self.runs):
            self._thread = threading.Thread(target=self._refresh_loop, name="cloudtrain-tensorboard", daemon=True)
            self._thread.start()

    def _refresh_loop(self) -> None:
        while not self._stop.wait(self.refresh_s):
            for run in self.runs:
                run.refresh()
            if not any(run.mirror is not None and run.running for run in self.runs):
                return

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Stop refreshing and stop the server (SIGTERM, then SIGKILL after 10 s)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> Board:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def to_dict(self) -> dict[str, Any]:
        return {"url": self.url, "runs": {run.name: {"job": run.job_id, "source": run.source} for run in self.runs}}


def run_name(job_id: str) -> str:
    """The job's name in TensorBoard: a file name of letters, digits and ``._-`` only."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", job_id).lstrip(".") or "run"


def attach(job_id: str) -> JobHandle:
    """A job by any id the CLI accepts (this machine's history, a full name, a run folder)."""
    found = locate(job_id)
    return found.backend.attach(found.job_id, region=found.region, project=found.project)


def prepare_runs(
    job_ids: Sequence[str], *, cache: Path | None = None, attach_job: Callable[[str], JobHandle] = attach
) -> list[BoardRun]:
    """Each job's event files copied into the cache by the one reader; one line for a job with none."""
    if not job_ids:
        raise UsageError("no jobs to show", hint="name one or more jobs, or --experiment NAME")
    runs: list[BoardRun] = []
    taken: set[str] = set()
    empty = []
    for job_id in job_ids:
        handle = attach_job(job_id)
        files = handle.files()
        if files.gone:
            raise UsageError(f"job {job_id}: {files.gone}", hint="its outputs are no longer kept")
        if files.tensorboard is None:
            raise UsageError(f"job {job_id}: {files.no_tensorboard or 'no TensorBoard event files'}")
        name = run_name(handle.job_id)
        while name in taken:
            name += "_"
        taken.add(name)
        folder = files.tensorboard
        mirror = Mirror(folder, (cache or cache_dir() / "tensorboard") / handle.backend_name / name)
        mirror.sync()
        for note in folder.notes:
            log.warning("warning: %s: %s", folder.uri, note)
        if not any(".tfevents." in f.name for f in mirror.dest.rglob("*")):
            empty.append(f"{folder.uri} holds no event files{' yet' if files.running else ''}")
        runs.append(BoardRun(name, handle.job_id, handle, mirror.dest, folder.uri, mirror, running=files.running))
    if empty:
        said = f"{'; '.join(empty)}: the trainer writes them, with a tf.keras.callbacks.TensorBoard callback "
        said += "(or tf.summary) whose log_dir is the job's TensorBoard folder"
        if len(empty) == len(runs) and not any(run.running for run in runs):
            raise UsageError(said, hint="add the callback to the trainer and run it again")
        log.warning("warning: %s", said)
    return runs


def board_folder(runs: Sequence[BoardRun], root: Path, port: int) -> Path:
    """A folder of links, one per run under its safe name, to the run's copy: TensorBoard reads
    ``--logdir`` of it, so no character of a job's path (a comma, a colon) changes what it reads."""
    folder = root / f"board-{port}"  # one server per port
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for run in runs:
        (folder / run.name).symlink_to(run.logdir.resolve(), target_is_directory=True)
    return folder


def _family(bind: str) -> socket.AddressFamily:
    """The address family of ``bind``; an unknown host is one line at once (not "port in use")."""
    try:
        return socket.getaddrinfo(bind, None, type=socket.SOCK_STREAM)[0][0]
    except (socket.gaierror, UnicodeError) as exc:
        raise UsageError(
            f"--bind {bind}: no such host or address ({exc})", hint="pass an address of this machine, e.g. 127.0.0.1"
        ) from None


def port_free(bind: str, port: int) -> bool:
    with socket.socket(_family(bind)) as sock:
        try:
            sock.bind((bind, port))
        except OSError:
            return False
    return True


def check_port(bind: str, port: int, server_pid: Path) -> None:
    """One line naming the next free port when ``port`` is taken on ``bind``; a server of ours left
    running there (its pid and start time recorded, its command TensorBoard's) is stopped first."""
    if port_free(bind, port):
        return
    stale: dict[str, Any] = {}
    with contextlib.suppress(UsageError):  # a damaged record proves nothing: the port is someone's
        stale = read_json_object(server_pid) if server_pid.is_file() else {}
    pid = stale.get("pid")
    if isinstance(pid, int) and pid > 1 and process_start(pid) == stale.get("start") and _LAUNCH in process_argv(pid):
        log.warning("warning: stopping the TensorBoard cloudtrain left running on port %s (pid %s)", port, pid)
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGTERM)
        for _ in range(40):
            if port_free(bind, port):
                return
            time.sleep(0.25)
    following = next((p for p in range(port + 1, min(port + 200, 65536)) if port_free(bind, p)), None)
    hint = f"the next free port is {following}: pass --port {following}" if following else "pass another --port"
    raise UsageError(f"port {port} on {bind} is in use", hint=hint)


def _loopback(bind: str) -> bool:
    try:
        return all(ipaddress.ip_address(a[4][0]).is_loopback for a in socket.getaddrinfo(bind, None))
    except (OSError, ValueError):
        return False


def _interfaces(bind: str) -> str:
    """The addresses ``bind`` serves on, as a person checks them."""
    if bind not in ("0.0.0.0", "::", ""):
        return bind
    names = [name for _, name in socket.if_nameindex()]
    return f"every interface of this machine ({', '.join(names)})"


def url_of(bind: str, port: int) -> str:
    host = socket.gethostname() if bind in ("0.0.0.0", "::", "") else bind
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def _die_with(parent: int) -> Callable[[], None]:
    """In the server: a process group of its own, and SIGTERM when cloudtrain dies (Linux's parent-death signal)."""

    def child() -> None:
        os.setpgid(0, 0)
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)

    return child


def serve(
    job_ids: Sequence[str],
    *,
    port: int = DEFAULT_PORT,
    bind: str = "127.0.0.1",
    refresh_s: float = REFRESH_S,
    cache: Path | None = None,
    attach_job: Callable[[str], JobHandle] = attach,
    start_timeout_s: float = START_TIMEOUT_S,
) -> Board:
    """Start TensorBoard over the jobs' event files; returns once it answers (its URL on the Board)."""
    import importlib.util

    if importlib.util.find_spec("tensorboard") is None:
        raise MissingExtra(
            "TensorBoard is not installed (no module 'tensorboard')",
            hint="pip install 'cloudtrain[tensorboard]'",
            extra="tensorboard",
        )
    root = cache or cache_dir() / "tensorboard"
    root.mkdir(parents=True, exist_ok=True)
    check_port(bind, port, root / f"server-{port}.pid")
    if not _loopback(bind):
        log.warning("warning: --bind %s serves the runs to anyone who reaches %s", bind, _interfaces(bind))
    runs = prepare_runs(job_ids, cache=cache, attach_job=attach_job)
    server_log = root / f"server-{port}.log"  # one per running server
    argv = [sys.executable, "-c", _LAUNCH, "--logdir", str(board_folder(runs, root, port)), "--port", str(port)]
    argv += ["--host", bind, "--reload_interval", str(max(1, int(min(refresh_s, 30))))]
    with open(server_log, "wb") as out:
        process = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=_die_with(os.getpid())
        )
    write_atomic(root / f"server-{port}.pid", json.dumps({"pid": process.pid, "start": process_start(process.pid)}))
    board = Board(url_of(bind, port), port, runs, process, refresh_s)
    _wait_ready(board, bind, server_log, start_timeout_s)
    board.start_refreshing()
    return board


def _wait_ready(board: Board, bind: str, server_log: Path, timeout_s: float) -> None:
    host = "127.0.0.1" if bind in ("0.0.0.0", "") else "::1" if bind == "::" else bind
    probe = f"http://{f'[{host}]' if ':' in host else host}:{board.port}/data/runs"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if board.process.poll() is not None:
            said = server_log.read_text(errors="replace").strip().splitlines()
            raise BackendError(
                f"TensorBoard stopped at start (exit {board.process.returncode}): {said[-1] if said else 'no output'}",
                hint=f"its output is in {server_log}",
            )
        try:
            with urllib.request.urlopen(probe, timeout=5):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.25)
    board.stop()
    raise BackendError(f"TensorBoard did not answer on {board.url} in {timeout_s:.0f} s", hint=f"see {server_log}")
