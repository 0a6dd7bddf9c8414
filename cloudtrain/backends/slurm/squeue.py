"""``squeue``: the states of many of the user's jobs on a cluster in one call, read without the backend
(``list`` asks it for the jobs history has not seen end), and the jobs a cluster holds."""

from __future__ import annotations

from cloudtrain.backends.slurm.section import cluster_of
from cloudtrain.backends.slurm.shell import ClusterShell
from cloudtrain.backends.slurm.states import STATES
from cloudtrain.job_states import JobStatus


def states_now(job_ids: list[str], *, region: str | None, project: str | None) -> dict[str, str]:
    """The states of those of ``job_ids`` the controller still holds: one ``squeue`` for them all."""
    region = region or cluster_of("")
    shell = ClusterShell("" if region == cluster_of("") else region)
    wanted = set(job_ids)
    out = shell.text(["squeue", "--me", "-h", "-o", "%i|%T"])
    found = {}
    for line in out.splitlines():
        job_id, _, native = line.partition("|")
        if job_id in wanted:
            found[job_id] = STATES.get(native, STATES["PENDING"]).value
    return found


def list_jobs(*, region: str | None = None, project: str | None = None, limit: int = 20) -> list[JobStatus]:
    """The user's jobs the controller holds (``squeue --me``), with the cluster, partition and nodes."""
    region = region or cluster_of("")
    shell = ClusterShell("" if region == cluster_of("") else region)
    out = shell.text(["squeue", "--me", "-h", "-o", "%i|%j|%T|%r|%P|%N"])
    jobs = []
    for line in out.splitlines()[:limit]:
        job_id, name, native, reason, partition, nodes = (line.split("|") + [""] * 6)[:6]
        jobs.append(
            JobStatus(
                job_id,
                name,
                STATES.get(native, STATES["PENDING"]),
                native,
                reason if reason not in ("None", "") else None,
                details={"cluster": region, "partition": partition, "nodes": nodes or None},
            )
        )
    return jobs
