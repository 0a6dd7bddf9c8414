"""Commands on the cluster: here when ``slurm.login`` is empty, else through the system OpenSSH client.

ssh multiplexes (``ControlMaster=auto``, one master per destination, kept 10 minutes), so a submit's dozen
commands open one connection, and the user's ``~/.ssh/config`` (ProxyCommand, ProxyJump, agent keys) applies;
``$CLOUDTRAIN_SSH_CONFIG`` names another (``ssh -F``)."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from cloudtrain.backends.slurm.ssh import remote_argv
from cloudtrain.errors import BackendError, CloudUnreachable

_SSH_FAILED = 255  # ssh's own failure (connection, authentication), not the remote command's
_TERMINAL_SIGNALS = (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)


class ClusterShell:
    """Run commands, write files and copy files where the cluster's ``sbatch`` is."""

    def __init__(self, login: str, environ: dict[str, str] | None = None):
        self.login = login
        self._environ = dict(os.environ if environ is None else environ)

    @property
    def remote(self) -> bool:
        return bool(self.login)

    def argv(self, command: Sequence[str]) -> list[str]:
        """``command`` as run here, or as one remote shell line over ssh."""
        return remote_argv(self.login, command, self._environ)

    def run(
        self, command: Sequence[str], *, input: bytes | None = None, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[bytes]:
        """Every command (ssh, its master, sbatch) runs in a session of its own, with no terminal: a Ctrl-C or
        SIGHUP meant for cloudtrain never kills one halfway, so a job that sbatch created is always recorded.

        Between its fork and its ``setsid`` a child is in cloudtrain's process group with default handlers, so a
        terminal's signal can kill it before it ran anything (ssh, once started, exits 255 on them): such a child
        is started once more."""
        for _ in range(2):
            try:
                result = subprocess.run(
                    self.argv(command),
                    input=input or b"",
                    capture_output=True,
                    timeout=timeout,
                    env=self._environ,
                    start_new_session=True,
                )
            except FileNotFoundError as exc:
                raise BackendError(f"{exc.filename} is not installed here", self._hint()) from None
            except subprocess.TimeoutExpired:
                raise self._silent(command, timeout) from None
            if -result.returncode not in _TERMINAL_SIGNALS:
                break
        return self._checked(command, result, check)

    def feed(
        self, command: Sequence[str], write: Callable[[IO[bytes]], None], *, timeout: float = 3600
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``command`` with ``write`` streaming its stdin (a data folder: never held in memory whole);
        its output is small. Failures as :meth:`run`'s."""
        try:
            proc = subprocess.Popen(
                self.argv(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._environ,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise BackendError(f"{exc.filename} is not installed here", self._hint()) from None
        if proc.stdin is not None:  # always, with stdin=PIPE
            with contextlib.suppress(BrokenPipeError):  # the command stopped reading: its stderr says why
                write(proc.stdin)
        try:
            out, err = proc.communicate(timeout=timeout)  # closes stdin: the end of the stream
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise self._silent(command, timeout) from None
        return self._checked(command, subprocess.CompletedProcess(proc.args, proc.returncode, out, err), True)

    def _checked(
        self, command: Sequence[str], result: subprocess.CompletedProcess[bytes], check: bool
    ) -> subprocess.CompletedProcess[bytes]:
        if self.remote and result.returncode == _SSH_FAILED:
            raise CloudUnreachable(
                f"ssh {self.login}: {_last(result.stderr) or 'connection failed'}",
                "check that `ssh " + self.login + "` works in a terminal",
            )
        if check and result.returncode != 0:
            said = _last(result.stderr) or _last(result.stdout) or f"exit code {result.returncode}"
            raise BackendError(f"{shlex.join(command)} failed: {said}")
        return result

    def text(self, command: Sequence[str], **kwargs: Any) -> str:
        return self.run(command, **kwargs).stdout.decode(errors="replace")

    def popen(self, command: Sequence[str]) -> subprocess.Popen[bytes]:
        """A long-lived command whose stdout is read as it comes (the log follower)."""
        return subprocess.Popen(
            self.argv(command),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env=self._environ,
            start_new_session=True,
        )

    def write(self, path: str, data: bytes, mode: int = 0o600) -> None:
        """A whole file, atomically (a reader never sees half of it)."""
        if not self.remote:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            tmp = f"{path}.tmp-{os.getpid()}"
            with open(tmp, "wb") as f:
                f.write(data)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
            return
        tmp = f"{path}.tmp-{os.getpid()}"
        line = (
            f"mkdir -p {shlex.quote(str(Path(path).parent))} && umask 077 && cat > {shlex.quote(tmp)} && "
            f"chmod {mode:o} {shlex.quote(tmp)} && mv -f {shlex.quote(tmp)} {shlex.quote(path)}"
        )
        self.run(["sh", "-c", line], input=data)

    def copy_once(self, local: Path, path: str) -> bool:
        """Copy ``local`` to ``path`` unless it is there already (content-addressed paths); whether it copied."""
        if self.run(["test", "-e", path], check=False).returncode == 0:
            return False
        self.write(path, local.read_bytes(), 0o644)
        return True

    def _silent(self, command: Sequence[str], timeout: float) -> CloudUnreachable:
        where = f"ssh {self.login}: " if self.remote else ""
        return CloudUnreachable(f"{where}{shlex.join(command)} did not answer in {timeout:.0f} s", self._hint())

    def _hint(self) -> str:
        return (
            f"check `ssh {self.login} sbatch --version`"
            if self.remote
            else "run on a machine with Slurm's commands (sbatch, squeue, scontrol), or set slurm.login"
        )


def _last(output: bytes | str) -> str:
    text = output.decode(errors="replace") if isinstance(output, bytes) else output
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""
