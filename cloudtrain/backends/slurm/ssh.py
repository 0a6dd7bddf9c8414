"""The ``ssh`` command line that reaches a login node: multiplexed, the user's own config applying.

Apart from :mod:`.shell` (which runs it): the dry run prints the ``sbatch`` line it would send."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from cloudtrain.backends.slurm import variables
from cloudtrain.errors import BackendError
from cloudtrain.history import cache_dir

SSH_CONFIG_VAR = variables.SSH_CONFIG
CONNECT_TIMEOUT_S = 20


#: A Unix socket path has at most 104-108 bytes; ssh adds ``/<40 hex digits>.<16 random>`` to the folder.
_SOCKET_PATH_MAX = 100


def control_dir() -> Path:
    """Where the ssh masters' sockets live (mode 700): ``<cache>/ssh``, or a short folder in /tmp
    when that path is too long for a Unix socket."""
    folder = cache_dir() / "ssh"
    if len(str(folder)) + 58 > _SOCKET_PATH_MAX:
        folder = Path("/tmp") / f"cloudtrain-ssh-{os.getuid()}"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if folder.stat().st_uid != os.getuid():
        raise BackendError(
            f"{folder} belongs to another user", "remove it, or set CLOUDTRAIN_CACHE_DIR to a short path"
        )
    return folder


def ssh_argv(login: str, environ: Mapping[str, str]) -> list[str]:
    """``ssh … -- DEST`` with multiplexing; a ``:port`` in the login becomes ``-p``. Every option comes before
    ``--``: the destination is never read as one (a login of ``-V`` is refused at validation too)."""
    dest, port = login, None
    if ":" in dest:
        dest, port = dest.rsplit(":", 1)
    control = control_dir()
    argv = [
        "ssh",
        "-o",
        "ControlMaster=auto",
        "-o",
        f"ControlPath={control}/%C",
        "-o",
        "ControlPersist=600",
        "-o",
        "BatchMode=yes",
        "-o",
        "ServerAliveInterval=15",
        "-o",
        f"ConnectTimeout={CONNECT_TIMEOUT_S}",  # a host that accepts and never answers: ssh's banner wait too
    ]
    if environ.get(SSH_CONFIG_VAR):
        argv += ["-F", environ[SSH_CONFIG_VAR]]
    if port:
        argv += ["-p", port]
    return argv + ["--", dest]


def remote_argv(login: str, command: Sequence[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """``command`` as run here (no ``login``), or as one remote shell line over ssh."""
    return (
        [*ssh_argv(login, os.environ if environ is None else environ), shlex.join(command)] if login else list(command)
    )
