"""What the Slurm backend does on a real cluster: ``sbatch``, ``squeue``, attaching to a job or a sweep.

Apart from :mod:`.backend` (the rules, and the dry run's script and commands), so a dry run never
imports the cluster's shell, its job handles or the processes they start."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cloudtrain import creation_window
from cloudtrain.backends import cuda
from cloudtrain.backends.runner import env_keys, interpreters, venv
from cloudtrain.backends.runner.image import PIP_AS_OF, Find, Image, Probe
from cloudtrain.backends.slurm import job_secrets, script, squeue, sweep_array, sweep_handle, transfer
from cloudtrain.backends.slurm.job import SlurmJob, by_full_name, id_file, run_index
from cloudtrain.backends.slurm.job_settings import slurm_section
from cloudtrain.backends.slurm.script import ENVBUILD, LAUNCHER, package_path
from cloudtrain.backends.slurm.section import cluster_of
from cloudtrain.backends.slurm.shell import ClusterShell
from cloudtrain.backends.slurm.sweep_handle import SlurmSweep
from cloudtrain.backends.slurm.tasks import tasks_plan
from cloudtrain.errors import BackendError, UsageError
from cloudtrain.history import find, records
from cloudtrain.packaging import BuiltPackage, required
from cloudtrain.spec import JobSpec

#: sbatch's words for a request the cluster can never run (bad partition, more nodes or GPUs than it has …).
_NEVER_RUNNABLE = re.compile(
    r"Requested node configuration is not available|Invalid (partition|account|qos|generic "
    r"resource)|Node count specification invalid|More processors requested|"
    r"Invalid feature specification|Job violates accounting/QOS policy",
    re.I,
)


#: Pending reasons of a job the cluster accepted but can never start (it does not enforce partition limits).
NEVER_RUNNABLE_REASONS = (
    "PartitionNodeLimit",
    "PartitionTimeLimit",
    "BadConstraints",
    "InvalidAccount",
    "InvalidQOS",
    "PartitionConfig",
    "QOSMaxNodePerJobLimit",
    "QOSMaxWallDurationPerJobLimit",
    "AssocMaxNodesPerJobLimit",
    "AssocMaxWallDurationPerJobLimit",
)  # not ReqNodeNotAvail (drained, down or reserved nodes) nor PartitionDown: those wait, shown on the live line
#: How long a submit waits for the scheduler's first word on a new job.
FIRST_LOOK_S = 5.0


def refuse_never_runnable(job: SlurmJob, sleep: Callable[[float], None] = time.sleep) -> None:
    """Cancel a job whose pending reason says it can never start, with one line naming the reason (exit 2)."""
    deadline = time.monotonic() + FIRST_LOOK_S
    wait = 0.5  # a handful of controller calls, not one every 0.2 s
    while True:
        fields = job._scontrol() or {}
        reason = fields.get("Reason", "None")
        if fields.get("JobState") != "PENDING" or reason != "None" or time.monotonic() > deadline:
            break
        sleep(wait)
        wait = min(wait * 2, 2.0)
    if fields.get("JobState") == "PENDING" and reason.split(",")[0] in NEVER_RUNNABLE_REASONS:
        job.cancel()
        raise UsageError(
            f"the cluster can never run this request: job {job.job_id} is pending with reason {reason}",
            "check replica_count, machine.accelerator_count, max_runtime and the slurm: section "
            "against `sinfo -o '%P %D %l %G'`",
        )


def sbatch_refusal(stderr: bytes) -> UsageError | BackendError:
    """What sbatch's refusal means: one line, exit 2 for a request the cluster can never run."""
    why = (stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1].removeprefix("sbatch: error: ")
    if _NEVER_RUNNABLE.search(why):
        return UsageError(
            f"the cluster can never run this request: {why}",
            "check replica_count, machine.accelerator_count and the slurm: section against `sinfo -o '%P %D %G'`",
        )
    return BackendError(f"sbatch failed: {why}")


class OnCluster:
    """The backend's calls that reach the cluster, with its image layer, job environment and log line."""

    name = "slurm"
    states_now, list_jobs = staticmethod(squeue.states_now), staticmethod(squeue.list_jobs)

    def __init__(
        self,
        image: Callable[[JobSpec, tuple[Find, Probe | None] | None], tuple[Image, cuda.GpuBuild]],
        python: Callable[[JobSpec, BuiltPackage], str],
        log: Callable[[str], None],
    ):
        self._image, self._python, self._log = image, python, log

    def built_image(self, spec: JobSpec) -> tuple[Image, cuda.GpuBuild]:
        """The image layer with this machine's interpreter that builds it (its key: the one ``slurm.python`` names)."""
        return self._image(spec, (interpreters.find_python, interpreters.probe))

    def sweep_request(self, request: dict[str, Any], spec: JobSpec, package: BuiltPackage) -> dict[str, Any]:
        """A sweep's dry run: the job array's script and commands around one job's ``request``."""
        return sweep_array.render(request, spec, self._image(spec, None)[0], self._python(spec, package))

    def script_tasks(
        self, spec: JobSpec, package: BuiltPackage, python: str, channels: dict[str, str]
    ) -> list[dict[str, Any]]:
        """A script's tasks as a dry run shows them: its command is the contract's, in the tasks' plan."""
        return [
            {k: t[k] for k in ("name", "argv", "cwd")} for t in tasks_plan(spec, package, python, channels)["tasks"]
        ]

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> SlurmJob | SlurmSweep:
        package = required(package, spec.job_name)  # a Slurm job always runs a package (no container:)
        if spec.sweep is not None:  # the trials as one job array (.sweep_array)
            return sweep_array.submit(self, spec, package, self._log)
        shell = ClusterShell(slurm_section(spec).login)
        secret_values = job_secrets.resolve(spec, shell)  # shell: references, where sbatch runs (first: fail early)
        self._refuse_early(shell, spec, script.batch_script(spec, script.Paths.of(spec, self._python(spec, package))))
        if not shell.remote:
            Path(package_path(spec, package)).parent.mkdir(parents=True, exist_ok=True)
        shell.copy_once(package.path, package_path(spec, package))
        image, gpu = self.built_image(spec)
        if image.note:
            self._log(image.note)
        if gpu.with_cuda:
            self._log(f"GPU environment: {gpu.line}")
        root = Path(script.workdir(spec))
        if shell.remote:
            env = (env_keys.env_dir(package, image, root), package.sha256, package_path(spec, package))
            python = self._build_remotely(shell, spec, image, env, "the job environment")
        else:
            python = str(venv.ensure_env(package, image, root=root, log=self._log).python)
        channels = transfer.place(spec, shell, slurm_section(spec).python, self._log)
        paths = script.Paths.of(spec, python)
        run = paths.run
        shell.write(f"{run}/slurm/job.sh", script.batch_script(spec, paths).encode(), 0o755)
        shell.write(paths.launcher, LAUNCHER.read_bytes(), 0o644)
        plan = tasks_plan(spec, package, python, channels)
        if job_secrets.needs_file(spec):
            job_secrets.write(spec, shell, run, secret_values)
            plan["secrets"] = job_secrets.secrets_path(run)  # the path only: the values stay in that 0600 file
        shell.write(paths.tasks, json.dumps(plan, indent=2).encode(), 0o600)
        creation_window.hold()  # Ctrl-C from here waits until the job is in history (no orphans)
        result = shell.run(script.sbatch_command(paths), check=False)
        if result.returncode != 0:
            raise sbatch_refusal(result.stderr)
        job_id = result.stdout.decode().strip().split(";")[0]
        shell.write(run_index(script.workdir(spec), job_id), run.encode(), 0o644)
        shell.write(id_file(run), json.dumps({"job_id": job_id, "workdir": script.workdir(spec)}).encode(), 0o644)
        job = SlurmJob(shell, job_id, run, cluster=spec.region, workdir=script.workdir(spec))
        refuse_never_runnable(job)
        return job

    def _refuse_early(self, shell: ClusterShell, spec: JobSpec, batch_script: str) -> None:
        """Before an environment is built: the workdir takes a write (neither full nor read-only), and
        ``sbatch --test-only`` finds nothing the cluster can never run (a GPU it has no GRES for, no such
        partition), each one line; anything else it says is left to sbatch itself."""
        workdir = script.workdir(spec)
        probe = 'mkdir -p "$1" && t="$1/.cloudtrain-probe-$$" && head -c 1048576 /dev/zero > "$t"; '
        probe += 'e=$?; rm -f "$t"; exit $e'
        wrote = shell.run(["sh", "-c", probe, "sh", workdir], check=False)
        if wrote.returncode != 0:
            why = (wrote.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
            raise UsageError(
                f"slurm.workdir {workdir} cannot be written on {spec.region}: {why}",
                "free space there, or set slurm.workdir to a folder you can write on a shared filesystem",
            )
        tested = shell.run(["sbatch", "--test-only"], input=batch_script.encode(), check=False)
        refusal = sbatch_refusal(tested.stderr) if tested.returncode != 0 else None
        # --test-only says "node configuration is not available" of drained nodes too: sbatch itself decides that
        if isinstance(refusal, UsageError) and "node configuration is not available" not in str(refusal):
            raise refusal

    def _build_remotely(
        self, shell: ClusterShell, spec: JobSpec, image: Image, env: tuple[Path, str, str], what: str
    ) -> str:
        """An environment (``env``: its folder, key and sdist: the package's, or the sweep tool's with a
        requirement) built on the login node (:mod:`.envbuild`), where the local builder would put it."""
        (folder, key, sdist) = env
        section, root = slurm_section(spec), Path(script.workdir(spec))
        request = {
            "python": section.python if section.python != "python3" else image.python.path,
            "image_dir": str(env_keys.image_dir(image, root)),
            "image_key": image.key,
            "image_packages": list(image.packages),
            "image_as_of": [PIP_AS_OF, *image.as_of(pip=True)] if image.as_of(pip=True) else [],
            "pkg_dir": str(folder),
            "pkg_key": key,
            "sdist": sdist,
        }
        builder = f"{root}/cloudtrain/envbuild.py"
        shell.write(builder, ENVBUILD.read_bytes(), 0o644)
        result = shell.run([section.python, builder, json.dumps(request)], check=False, timeout=3600)
        if result.returncode != 0:
            why = (result.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
            raise BackendError(
                f"cannot build {what} on {section.login}: {why}",
                "check slurm.python (>= 3.10) and that the login node reaches the package index",
            )
        if json.loads(result.stdout.decode() or "{}").get("image_built"):
            self._log(f"built the image environment on {section.login} once ({image.describe()}); later jobs reuse it")
        return str(env_keys.env_python(folder))

    def attach(self, job_id: str, *, region: str | None = None, project: str | None = None) -> SlurmJob | SlurmSweep:
        """A job by its Slurm id; ``region`` is the cluster and ``project`` the workdir (as history has them)."""
        if not project:
            raise UsageError(f"Slurm job {job_id}: no workdir given", "pass --project WORKDIR (or --config CONFIG)")
        region = region or cluster_of("")
        shell = ClusterShell("" if region == cluster_of("") else region)
        found = shell.run(["cat", run_index(project, job_id)], check=False)
        if found.returncode != 0 and (sweep := sweep_handle.attach(shell, job_id, region, project)) is not None:
            return sweep  # a sweep's first array id: cancel takes the whole sweep
        if found.returncode != 0:
            raise UsageError(
                f"no cloudtrain job {job_id} in {project} on {region}", "check the job id (cloudtrain list)"
            )
        return SlurmJob(shell, job_id, found.stdout.decode().strip(), cluster=region, workdir=project)

    def attach_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> SlurmSweep:
        """A sweep by its first array's id; ``project`` is the workdir (as history has it)."""
        shell, region = sweep_handle.cluster_shell(region)
        sweep = sweep_handle.attach(shell, job_id, region, project or "")
        if sweep is None:
            raise UsageError(f"no cloudtrain sweep {job_id} in {project} on {region}", "check the id (cloudtrain list)")
        return sweep

    def resume_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> SlurmSweep:
        """A new array for a stopped sweep's interrupted and remaining trials."""
        return self.attach_sweep(job_id, region=region, project=project).resume()

    def parse_job_id(self, text: str) -> tuple[str, dict[str, str]] | None:
        """A sweep's trial by its array task id (``<array>_<task>``), or an array a resume submitted, its
        sweep found in history; or any job by its full name (``<cluster>:<run folder>``, as ``status``
        names it), read from its run folder."""
        found = sweep_handle.trial_location(text, find, records)
        if found is not None:
            return found
        return by_full_name(text, lambda: {r.region for r in records() if r.backend == self.name})
