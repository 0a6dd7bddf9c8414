"""The Slurm backend: the package and its environment in the workdir, a batch script, ``sbatch``.

On the cluster, under ``slurm.workdir`` (a filesystem every node sees):

- ``packages/<sha256>/<sdist>``: each package once, by content (only what changed is copied);
- ``envs/``: the per-image Python environments, built once and reused, with the ``--local``
  backend's builder and its image-version rules (:mod:`cloudtrain.backends.runner.venv`);
- ``runs/<job name>/``: the run: ``model/``, ``checkpoints/``, ``logs/`` (TensorBoard), and
  ``slurm/`` (batch script, launcher, tasks' plan, output and exit files);
- ``jobs/<job id>``: the run folder of each job id (``status``/``logs`` by id).

History records the cluster (``slurm.login`` or ``local``) as the region and the workdir as the project.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from cloudtrain import creation_window, environment_vars
from cloudtrain.backends import DEFAULT_CONTRACT, cuda
from cloudtrain.backends.base import Backend, BackendFacts, JobStatus
from cloudtrain.backends.runner import contract, venv
from cloudtrain.backends.runner import image as runner_image
from cloudtrain.backends.runner.image import PIP_AS_OF, Image
from cloudtrain.backends.slurm import data, job_secrets, script, sweep_array, sweep_handle
from cloudtrain.backends.slurm.checks import slurm_checks
from cloudtrain.backends.slurm.job import SlurmJob, by_full_name, id_file, run_index
from cloudtrain.backends.slurm.job_settings import SlurmSettings, slurm_node, slurm_section
from cloudtrain.backends.slurm.section import cluster_of, fill_slurm_keys
from cloudtrain.backends.slurm.shell import ClusterShell
from cloudtrain.backends.slurm.states import STATES
from cloudtrain.catalog.records import MachineInfo
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.rules import Check
from cloudtrain.config.schema import JobConfig
from cloudtrain.data.schemes import channel_env
from cloudtrain.errors import BackendError, UsageError
from cloudtrain.history import find, records
from cloudtrain.packaging import BuiltPackage, required
from cloudtrain.spec import JobSpec

LAUNCHER = Path(__file__).parent / "launcher.py"
ENVBUILD = Path(__file__).parent / "envbuild.py"
GRACE_PERIOD_VAR = environment_vars.PREEMPTION_GRACE  # trainer.preemption.GRACE_VAR: save at once on SIGTERM
#: sbatch's words for a request the cluster can never run (bad partition, more nodes or GPUs than it has …).
_NEVER_RUNNABLE = re.compile(
    r"Requested node configuration is not available|Invalid (partition|account|qos|generic "
    r"resource)|Node count specification invalid|More processors requested|"
    r"Invalid feature specification|Job violates accounting/QOS policy",
    re.I,
)


def package_path(spec: JobSpec, package: BuiltPackage) -> str:
    return f"{script.workdir(spec)}/packages/{package.sha256}/{package.filename}"


def tasks_plan(spec: JobSpec, package: BuiltPackage, python: str, channels: dict[str, str]) -> dict[str, Any]:
    """Each task's command, folder and variables: the Vertex contract (``AIP_*`` dirs under the run,
    ``TF_CONFIG``/``CLUSTER_SPEC`` whose addresses the launcher fills in), ``SM_CHANNEL_<NAME>`` at
    ``channels`` (each channel's folder on the cluster: :mod:`.data`)."""
    run = spec.output_dir.rstrip("/")
    on_cluster = replace(package, path=Path(package_path(spec, package)))
    per_node = script.tasks_per_node(spec)
    tasks_total = spec.replica_count * per_node  # one task per GPU: each a replica of the contract (TF_CONFIG)
    plans = contract.plan(
        replace(spec, replica_count=tasks_total) if per_node > 1 else spec,
        output_dir=run,
        ports=[0] * tasks_total,
        package=on_cluster,
        num_gpus=1 if per_node > 1 else spec.machine.accelerator_count,
    )
    tasks = []
    for p in plans:
        env = {**spec.env, **p.env, GRACE_PERIOD_VAR: "0", environment_vars.PYTHONUNBUFFERED: "1"}
        env.update({channel_env(name): folder for name, folder in channels.items()})
        tasks.append(
            {
                "name": p.name,
                "argv": contract.argv(spec, p, python, on_cluster),
                "cwd": f"{run}/slurm/work/{p.name}",  # not the contract's local-run/: a Slurm job is no local run
                "env": env,
                "dirs": contract_dirs(p, env),
            }
        )
    return {
        "job_name": spec.job_name,
        "run": run,
        "gpus_per_node": spec.machine.accelerator_count,
        "gpus_per_task": 1 if per_node > 1 else spec.machine.accelerator_count,
        "tasks": tasks,
    }


#: The contract's output folders by their variables: each exists when the user's code starts (issue #40).
CONTRACT_DIR_VARS = environment_vars.CONTRACT_FOLDERS


def contract_dirs(plan: Any, env: dict[str, str]) -> list[str]:
    """The folders the launcher makes before the task's command: the plan's model, checkpoint and
    TensorBoard folders, and every contract variable's folder on the cluster's filesystem."""
    dirs = [plan.model_dir, plan.checkpoint_dir, plan.tensorboard_dir]
    dirs += [env[v] for v in CONTRACT_DIR_VARS if env.get(v, "").startswith("/")]
    return list(dict.fromkeys(dirs))


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


class SlurmBackend(BackendFacts):
    name = "slurm"
    title = "Slurm"
    section = "slurm"
    settings_record = SlurmSettings  # with the slurm: section
    location_keys = ("region", "project")  # the cluster (login destination or "local") and the workdir
    secret_kind = "shell"  # shell:NAME read where sbatch runs, at submit (.job_secrets)
    storage_schemes = ("gs", "s3")  # bucket channels are downloaded once at submit (.data)
    image_region = "us-central1"  # the image rules of --local
    contract = DEFAULT_CONTRACT  # the image-version rules of --local's default, and its contract on the nodes
    list_columns = ("cluster", "partition", "nodes")
    machine_keys = ("accelerator_type",)  # --gres=gpu:TYPE:N
    local_data = "read in place if shared, else copied into the workdir"
    bucket_data = "downloaded once at submit"  # into the workdir (.data)

    def fill_document(self, data: dict[str, Any]) -> list[tuple[tuple[str, ...], str, str]]:
        """``region`` (the cluster) and ``machine.type`` filled in; the keys the cluster decides refused."""
        return fill_slurm_keys(data)

    def resolve_machine(self, config: JobConfig) -> MachineInfo:
        return slurm_node(config.machine.accelerator_count, config.machine.accelerator_type)

    def job_settings(self, config: JobConfig) -> SlurmSettings:
        """The slurm: section, and machine.accelerator_type (the gres GPU type)."""
        settings = super().job_settings(config)
        if not isinstance(settings, SlurmSettings):  # never: settings_record is SlurmSettings
            raise TypeError(f"Slurm settings expected, got {type(settings).__name__}")
        return replace(settings, gpu_type=config.machine.accelerator_type)

    def default_output_dir(self, config: JobConfig, run_id: str) -> str:
        """On the cluster's shared filesystem."""
        workdir: str = config.section("slurm").workdir  # the schema's slurm: section (the registry adds it)
        return f"{workdir.rstrip('/')}/runs/{run_id}"

    def project(self, loaded: LoadedConfig) -> tuple[str | None, str | None]:
        """The workdir: history records it as the project."""
        workdir: str = loaded.config.section("slurm").workdir
        return workdir.rstrip("/"), "slurm.workdir"

    def field_checks(self, loaded: LoadedConfig) -> list[Check]:
        """The slurm: section, nodes and GPUs per node: a cluster has no catalog of regions and machines."""
        return list(slurm_checks(loaded))

    def __init__(
        self, *, image_for: Callable[[JobSpec], Image] | None = None, log: Callable[[str], None] | None = None
    ):
        self._image_for = image_for or (
            lambda spec: runner_image.image_for(spec, slim=True)
        )  # a cluster: no cloud image
        self._log = log or (lambda message: print(message, file=sys.stderr, flush=True))

    def _image(self, spec: JobSpec) -> tuple[Image, cuda.GpuBuild]:
        """The image layer: with GPUs requested, TensorFlow with its CUDA wheels unless ``slurm.setup`` loads CUDA."""
        image, count = self._image_for(spec), spec.machine.accelerator_count
        gpus = f"{count} GPU{'s' if count != 1 else ''} per node" if count else None
        build = cuda.gpu_build(image.packages, gpus=gpus, cuda_from=cuda.cuda_module(slurm_section(spec).setup))
        return replace(image, packages=build.packages), build

    def _python(self, spec: JobSpec, package: BuiltPackage) -> str:
        image, _ = self._image(spec)
        return str(venv.env_python(venv.env_dir(package, image, Path(script.workdir(spec)))))

    def render(self, spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
        """The batch script and the commands ``submit`` runs, with the environment's path on the cluster."""
        package = required(package, spec.job_name)  # a Slurm job always runs a package (no container:)
        python = self._python(spec, package)
        paths = script.Paths.of(spec, python)
        shell = ClusterShell(slurm_section(spec).login)
        channels, data_steps = data.planned(spec)
        plan = tasks_plan(spec, package, python, channels)
        sbatch = shell.argv(script.sbatch_command(paths)) if shell.remote else script.sbatch_command(paths)
        request = {
            "backend": "slurm",
            "cluster": spec.region,
            "workdir": script.workdir(spec),
            "run": paths.run,
            "tensorflow_build": self._image(spec)[1].line,
            "commands": [
                f"copy {package.path} to {package_path(spec, package)} (unless it is there)",
                f"build the environment {Path(python).parent.parent} once (unless it is there)",
                *data_steps,
                f"write {paths.run}/slurm/job.sh, launcher.py, tasks.json",
                shlex.join(sbatch),
            ],
            "batch_script": script.batch_script(spec, paths),
            "tasks": [{"name": t["name"], "argv": t["argv"], "cwd": t["cwd"]} for t in plan["tasks"]],
        }
        return request if spec.sweep is None else sweep_array.render(request, spec, self._image(spec)[0], python)

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> SlurmJob | sweep_handle.SlurmSweep:
        package = required(package, spec.job_name)  # a Slurm job always runs a package (no container:)
        if spec.sweep is not None:  # the trials as one job array (.sweep_array)
            parts = sweep_array.JobParts(self, tasks_plan, package_path, LAUNCHER)
            return sweep_array.submit(parts, spec, package, self._log)
        shell = ClusterShell(slurm_section(spec).login)
        secret_values = job_secrets.resolve(spec, shell)  # shell: references, where sbatch runs (first: fail early)
        self._refuse_early(shell, spec, script.batch_script(spec, script.Paths.of(spec, self._python(spec, package))))
        if not shell.remote:
            Path(package_path(spec, package)).parent.mkdir(parents=True, exist_ok=True)
        shell.copy_once(package.path, package_path(spec, package))
        image, gpu = self._image(spec)
        if image.note:
            self._log(image.note)
        if gpu.with_cuda:
            self._log(f"GPU environment: {gpu.line}")
        root = Path(script.workdir(spec))
        if shell.remote:
            env = (venv.env_dir(package, image, root), package.sha256, package_path(spec, package))
            python = self._build_remotely(shell, spec, image, env, "the job environment")
        else:
            python = str(venv.ensure_env(package, image, root=root, log=self._log).python)
        channels = data.place(spec, shell, slurm_section(spec).python, self._log)
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
            "image_dir": str(venv.image_dir(image, root)),
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
        return str(venv.env_python(folder))

    def attach(
        self, job_id: str, *, region: str | None = None, project: str | None = None
    ) -> SlurmJob | sweep_handle.SlurmSweep:
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

    def attach_sweep(
        self, job_id: str, *, region: str | None = None, project: str | None = None
    ) -> sweep_handle.SlurmSweep:
        """A sweep by its first array's id; ``project`` is the workdir (as history has it)."""
        shell, region = sweep_handle.cluster_shell(region)
        sweep = sweep_handle.attach(shell, job_id, region, project or "")
        if sweep is None:
            raise UsageError(f"no cloudtrain sweep {job_id} in {project} on {region}", "check the id (cloudtrain list)")
        return sweep

    def resume_sweep(
        self, job_id: str, *, region: str | None = None, project: str | None = None
    ) -> sweep_handle.SlurmSweep:
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

    def states_now(self, job_ids: list[str], *, region: str | None, project: str | None) -> dict[str, str]:
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

    def list_jobs(self, *, region: str | None = None, project: str | None = None, limit: int = 20) -> list[JobStatus]:
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


BACKEND: Backend = SlurmBackend()  # mypy checks it is a whole Backend
