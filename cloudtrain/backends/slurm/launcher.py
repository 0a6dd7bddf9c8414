"""One task of a cloudtrain job on a Slurm node: the cloud-neutral contract from ``SLURM_*``, then the job.

Runs with the job environment's Python (>= 3.10), standard library only; ``python launcher.py
<run>/slurm/tasks.json``. Task ``SLURM_PROCID`` publishes ``address:port`` (a free port on its ``NodeAddr``: unlike
``SlurmClusterResolver``'s node names and fixed port, this works where names do not resolve or nodes share a host)
in the shared run folder; once all have, ``TF_CONFIG`` and ``CLUSTER_SPEC`` list them in task order (task 0 is the
chief). The command runs with the plan's variables (and ``CLOUDTRAIN_SLURM_NODES``,
``CLOUDTRAIN_SLURM_GPUS_PER_NODE``); SIGTERM, SIGINT and SIGUSR1 reach it as SIGTERM. ``task-<T>.json`` records
node, times and exit status, so the outcome is known after the controller forgot the job."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any

RENDEZVOUS_TIMEOUT_S = 600


def write_json(path: str, data: Any) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def node_address(node: str) -> str:
    """The controller's NodeAddr of ``node`` (what slurmd listens on), else what the host name resolves to."""
    try:
        out = subprocess.run(
            ["scontrol", "show", "node", "-o", node], capture_output=True, text=True, timeout=30
        ).stdout
        for word in out.split():
            if word.startswith("NodeAddr="):
                return word.split("=", 1)[1]
    except (OSError, subprocess.SubprocessError):
        pass
    return socket.gethostbyname(socket.gethostname())


def free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        port: int = s.getsockname()[1]
        return port


def rendezvous(out: str, index: int, count: int, address: str) -> list[str]:
    """Every task's ``address:port``, in task order, once all have published theirs."""
    mine = f"{address}:{free_port(address)}"
    write_json(os.path.join(out, f"addr-{index}.json"), {"address": mine})
    deadline = time.monotonic() + RENDEZVOUS_TIMEOUT_S
    while True:
        found = []
        for i in range(count):
            try:
                with open(os.path.join(out, f"addr-{i}.json")) as f:
                    found.append(json.load(f)["address"])
            except (OSError, ValueError, KeyError):
                break
        if len(found) == count:
            return found
        if time.monotonic() > deadline:
            raise SystemExit(
                f"cloudtrain launcher: task {index}: only {len(found)} of {count} tasks started in "
                f"{RENDEZVOUS_TIMEOUT_S} s"
            )
        time.sleep(0.2)


def with_addresses(env: dict[str, str], addresses: list[str]) -> dict[str, str]:
    """TF_CONFIG / CLUSTER_SPEC with the tasks' real addresses (chief = task 0, workers after)."""
    env = dict(env)
    if "TF_CONFIG" in env:
        tf = json.loads(env["TF_CONFIG"])
        tf["cluster"] = {"chief": addresses[:1], "worker": addresses[1:]}
        env["TF_CONFIG"] = json.dumps(tf)
    if "CLUSTER_SPEC" in env:
        spec = json.loads(env["CLUSTER_SPEC"])
        spec["cluster"] = {"workerpool0": addresses[:1], "workerpool1": addresses[1:]}
        env["CLUSTER_SPEC"] = json.dumps(spec)
    return env


def job_nodes() -> list[str]:
    """The job's node names, one each (``SLURM_JOB_NODELIST`` is compressed: ``node[1-2]``)."""
    nodelist = os.environ.get("SLURM_JOB_NODELIST", "")
    try:
        out = subprocess.run(
            ["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out.split() or [nodelist]


def emit(data: bytes) -> int:
    """Write ``data`` to this task's output (the task log srun writes); its length."""
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]
    return len(data)


def copy_output(child: subprocess.Popen[bytes], times_path: str, first: bytes) -> None:
    """``first`` (the launcher's line), then the command's output to this task's log, byte for byte, as it comes;
    each chunk's end offset and time in ``task-<T>.times``, so a line shown later carries the time it was printed."""
    if child.stdout is None:  # never: it was started with stdout=PIPE
        return
    fd = child.stdout.fileno()
    with open(times_path, "a") as times:
        written = emit(first)
        times.write(f"{written} {time.time():.3f}\n")
        while True:
            data = os.read(fd, 65536)
            if not data:
                return
            now = time.time()
            written += emit(data)
            times.write(f"{written} {now:.3f}\n")
            times.flush()


def main(argv: list[str]) -> int:
    with open(argv[1]) as f:
        plan = json.load(f)
    index = int(os.environ["SLURM_PROCID"])
    count = len(plan["tasks"])
    node = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
    restart = int(os.environ.get("SLURM_RESTART_COUNT") or 0)
    out = os.path.join(plan["run"], "slurm", f"r{restart}")
    os.makedirs(out, exist_ok=True)
    task = plan["tasks"][index]
    record = {
        "task": index,
        "name": task["name"],
        "node": node,
        "restart": restart,
        "start": time.time(),
        "end": None,
        "exit": None,
        "job_id": os.environ.get("SLURM_JOB_ID"),
    }
    write_json(os.path.join(out, f"task-{index}.json"), record)
    env = {**os.environ, **task["env"]}
    if plan.get("secrets"):  # secrets: values, from a 0600 file (never in tasks.json or job.sh)
        with open(plan["secrets"]) as f:
            env.update(json.load(f)["env"])
    # for the trainer's plan (trainer.plan.slurm_placement): the nodes by name and the GPUs per node
    env["CLOUDTRAIN_SLURM_NODES"] = ",".join(job_nodes())
    env["CLOUDTRAIN_SLURM_GPUS_PER_NODE"] = str(plan.get("gpus_per_node", 0))
    if plan.get("gpus_per_task") == 1 and plan.get("gpus_per_node", 0) > 1 and "CUDA_VISIBLE_DEVICES" not in env:
        env["CUDA_VISIBLE_DEVICES"] = os.environ.get("SLURM_LOCALID", "0")  # one task per GPU: its own
    if count > 1:
        addresses = rendezvous(out, index, count, node_address(node))
        env = with_addresses(env, addresses)
        said = f"cloudtrain: task {index} ({task['name']}) on {node} at {addresses[index]}\n"
    else:
        said = f"cloudtrain: task {index} ({task['name']}) on {node}\n"
    for folder in task.get("dirs", []):
        os.makedirs(folder, exist_ok=True)
    os.makedirs(task["cwd"], exist_ok=True)
    child = subprocess.Popen(task["argv"], cwd=task["cwd"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def forward(signum: int, frame: Any) -> None:
        try:
            child.send_signal(signal.SIGTERM)
        except OSError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
        signal.signal(signum, forward)
    copy_output(child, os.path.join(out, f"task-{index}.times"), said.encode())
    code = child.wait()
    if code < 0:  # killed by a signal: the shell's 128 + N, and the signal itself
        record["signal"] = -code
        code = 128 - code
    record.update(end=time.time(), exit=code)
    write_json(os.path.join(out, f"task-{index}.json"), record)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
