"""A real Slurm cluster on this machine for the tests: munged, slurmctld and two slurmd nodes.

Debian's slurm-wlm is built with multiple-slurmd, so ``slurmd -N node1`` and ``slurmd -N node2``
run on one host as two nodes, each on its own port. Everything (munge key and socket, state,
spool, logs, slurm.conf) lives in one temporary folder; ``SLURM_CONF`` points the daemons and the
clients at it. No accounting (as on many clusters), a short ``MinJobAge`` (the controller forgets
ended jobs quickly, so the launcher's files must carry the outcome) and a low munge
``cred_expire`` (a requeued job starts at once).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

NODES = ("node1", "node2")
PARTITION = "debug"
#: A variable only the login node's sessions have (sshd SetEnv): a ``shell:`` secret read there, not here.
LOGIN_SECRET_VAR, LOGIN_SECRET = "CT_TEST_LOGIN_SECRET", "login-side-5e1c9a7b"
TOOLS = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "scontrol")


def missing_tools() -> list[str]:
    return [t for t in TOOLS if shutil.which(t) is None and not Path("/usr/sbin", t).exists()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sbin(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


@dataclass
class Cluster:
    root: Path
    conf: Path
    munge_socket: Path
    procs: list[subprocess.Popen] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        """What a client needs: ``SLURM_CONF`` (the munge socket is named in slurm.conf)."""
        return {"SLURM_CONF": str(self.conf)}

    def run(self, *argv: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        env = {**os.environ, **self.env()}
        return subprocess.run(argv, capture_output=True, text=True, env=env, check=check, timeout=timeout)

    def node_state(self, node: str) -> str:
        out = self.run("scontrol", "show", "node", node).stdout
        return next(w.split("=", 1)[1] for w in out.split() if w.startswith("State="))

    def set_node(self, node: str, state: str, reason: str = "test") -> None:
        args = ["scontrol", "update", f"NodeName={node}", f"State={state}"]
        if state.upper() in ("DOWN", "DRAIN"):
            args.append(f"Reason={reason}")
        self.run(*args)

    def wait_idle(self, timeout: float = 60) -> None:
        """Until every node is IDLE (resumed after a test set one DOWN)."""
        deadline = time.monotonic() + timeout
        while True:
            states = {n: self.node_state(n) for n in NODES}
            if all(s.split("+")[0] == "IDLE" for s in states.values()):
                return
            for node, state in states.items():
                if state.startswith(("DOWN", "DRAIN")):
                    self.set_node(node, "RESUME")
            if time.monotonic() > deadline:
                raise TimeoutError(f"nodes not idle: {states}; see {self.root}")
            time.sleep(0.2)

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(self.root.glob("*.log"))
        )


def slurm_conf(
    root: Path, *, ctld_port: int, node_ports: dict[str, int], munge_socket: Path, cpus: int, spool: Path | None = None
) -> str:
    """The cluster's slurm.conf: one controller and ``node_ports`` as nodes on this host; the nodes' spool
    (where slurmstepd makes its sockets) under ``spool``, else under ``root``."""
    host = socket.gethostname()
    lines = [
        "ClusterName=cloudtrain-test",
        f"SlurmctldHost={host}(127.0.0.1)",
        f"SlurmctldPort={ctld_port}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={munge_socket},cred_expire=10",
        f"StateSaveLocation={root}/state",
        f"SlurmdSpoolDir={spool or root}/spool-%n",
        f"SlurmctldPidFile={root}/slurmctld.pid",
        f"SlurmdPidFile={root}/slurmd-%n.pid",
        f"SlurmctldLogFile={root}/slurmctld.log",
        f"SlurmdLogFile={root}/slurmd-%n.log",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "MpiDefault=none",
        "SwitchType=switch/none",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "ReturnToService=2",
        "MinJobAge=5",
        "KillWait=5",
        "InactiveLimit=0",
        "SlurmdTimeout=30",
        "SlurmctldTimeout=30",
        "MessageTimeout=10",
        "RebootProgram=/bin/true",
    ]
    for node, port in node_ports.items():
        lines.append(f"NodeName={node} NodeHostname={host} NodeAddr=127.0.0.1 Port={port} CPUs={cpus} State=UNKNOWN")
    lines.append(f"PartitionName={PARTITION} Nodes={','.join(node_ports)} Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(line for line in lines if line) + "\n"


def _wait_for(check, what: str, cluster: Cluster | None, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not come up" + (f"\n{cluster.logs()}" if cluster else ""))
        time.sleep(0.1)


@contextlib.contextmanager
def slurm_cluster(root: Path) -> Iterator[Cluster]:
    """Start munged, slurmctld and the nodes under ``root``; stop them all on the way out."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "state").mkdir(exist_ok=True)
    munge_dir = root / "munge"
    munge_dir.mkdir(exist_ok=True)
    key = munge_dir / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    munge_socket = munge_dir / "munge.sock"
    # slurmstepd makes a unix socket per job step in the spool (sun_path: 108 bytes at most). Under a deep
    # temporary folder (a fresh clone's own TMPDIR, pytest's per-worker folders) that path was 114 bytes and
    # every batch job failed to start, so the spool is a short temporary folder of its own, removed at the end.
    spool = Path(tempfile.mkdtemp(prefix="ct-slurm-", dir="/tmp" if len(str(root)) > 40 else root))
    conf = root / "slurm.conf"
    conf.write_text(
        slurm_conf(
            root,
            ctld_port=free_port(),
            node_ports={n: free_port() for n in NODES},
            munge_socket=munge_socket,
            cpus=os.cpu_count() or 1,
            spool=spool,
        )
    )
    cluster = Cluster(root, conf, munge_socket)
    env = {**os.environ, "SLURM_CONF": str(conf)}
    try:
        munged = [
            _sbin("munged"),
            "--foreground",
            "--force",
            f"--key-file={key}",
            f"--socket={munge_socket}",
            f"--pid-file={munge_dir}/munged.pid",
            f"--log-file={root}/munged.log",
            f"--seed-file={munge_dir}/munge.seed",
        ]
        cluster.procs.append(
            subprocess.Popen(
                munged, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
            )
        )
        _wait_for(munge_socket.exists, "munged", cluster)
        cluster.procs.append(
            subprocess.Popen(
                [_sbin("slurmctld"), "-D", "-i", "-f", str(conf)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )
        _wait_for(lambda: cluster.run("scontrol", "ping", check=False).stdout.count("UP") > 0, "slurmctld", cluster)
        for node in NODES:
            cluster.procs.append(
                subprocess.Popen(
                    [_sbin("slurmd"), "-D", "-N", node, "-f", str(conf)],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        _wait_for(lambda: _all_idle(cluster), "the nodes", cluster, timeout=60)
        yield cluster
    finally:
        _stop(cluster)
        shutil.rmtree(spool, ignore_errors=True)


def _all_idle(cluster: Cluster) -> bool:
    out = cluster.run("sinfo", "-h", "-N", "-o", "%N %T", check=False).stdout.split()
    return out.count("idle") == len(NODES)


def _stop(cluster: Cluster) -> None:
    """Every daemon (and what it started) by its own process group; slurmd last-started first."""
    for proc in reversed(cluster.procs):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in reversed(cluster.procs):
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


@dataclass
class LoginNode:
    """An OpenSSH server on 127.0.0.1 standing for a cluster's login node, and the ssh client
    config file (``ssh -F``) that reaches it as ``Host`` :attr:`host`: what a user's ~/.ssh/config holds."""

    ssh_config: Path
    host: str = "slurm-login"


@contextlib.contextmanager
def login_node(root: Path, cluster: Cluster) -> Iterator[LoginNode]:
    """sshd with a throwaway host key and one authorized key; its sessions see the cluster's SLURM_CONF."""
    root.mkdir(parents=True, exist_ok=True)
    for name in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / name)], check=True)
    (root / "authorized_keys").write_text((root / "user_key.pub").read_text())
    port = free_port()
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # sshd's privilege separation folder
    (root / "sshd_config").write_text(
        f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {root}/host_key\nPidFile {root}/sshd.pid\n"
        f"AuthorizedKeysFile {root}/authorized_keys\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PubkeyAuthentication yes\nPermitRootLogin yes\nUsePAM no\nStrictModes no\nMaxSessions 50\nMaxStartups 50\n"
        f"SetEnv SLURM_CONF={cluster.conf} {LOGIN_SECRET_VAR}={LOGIN_SECRET}\n"
    )
    host_pub = (root / "host_key.pub").read_text().split()
    (root / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
    config = root / "ssh_config"
    config.write_text(
        f"Host slurm-login\n  HostName 127.0.0.1\n  Port {port}\n  User {os.environ.get('USER') or 'root'}\n"
        f"  IdentityFile {root}/user_key\n  IdentitiesOnly yes\n  UserKnownHostsFile {root}/known_hosts\n"
        "  StrictHostKeyChecking yes\n  BatchMode yes\n"
    )
    proc = subprocess.Popen(
        [_sbin("sshd"), "-D", "-e", "-f", str(root / "sshd_config")],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=open(root / "sshd.log", "w"),
    )
    try:

        def ready() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        _wait_for(ready, "sshd", None)
        yield LoginNode(config)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
