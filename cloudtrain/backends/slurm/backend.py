"""The Slurm backend: the package and its environment in the workdir, a batch script, ``sbatch``.

Under ``slurm.workdir`` (a filesystem every node sees): ``packages/<sha256>/`` (each package once, by content),
``envs/`` (built with the ``--local`` builder's rules, :mod:`cloudtrain.backends.runner.venv`), ``runs/<job>/``
(``model/``, ``checkpoints/``, ``logs/``, and ``slurm/``: script, launcher, plan, output, exit files) and
``jobs/<job id>`` (each id's run folder). History records the cluster (``slurm.login`` or ``local``) as the
region and the workdir as the project."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cloudtrain.backend_rules.capabilities import DEFAULT_CAPABILITIES, Capabilities, Capability
from cloudtrain.backends import DEFAULT_CONTRACT, cuda
from cloudtrain.backends.base import Backend, BackendFacts, Facts, JobStatus, Words
from cloudtrain.backends.runner import env_keys
from cloudtrain.backends.runner import image as runner_image
from cloudtrain.backends.runner.image import Find, Image, Interpreter, Probe
from cloudtrain.backends.slurm import data, script
from cloudtrain.backends.slurm.checks import slurm_checks
from cloudtrain.backends.slurm.job_settings import SlurmSettings, slurm_node, slurm_section
from cloudtrain.backends.slurm.script import package_path, tasks_shown
from cloudtrain.backends.slurm.section import fill_slurm_keys
from cloudtrain.backends.slurm.ssh import remote_argv
from cloudtrain.catalog.records import MachineInfo
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.rules import Check
from cloudtrain.config.schema import JobConfig
from cloudtrain.packaging import BuiltPackage, required
from cloudtrain.spec import JobSpec

if TYPE_CHECKING:
    from cloudtrain.backends.slurm.cluster import OnCluster
    from cloudtrain.backends.slurm.job import SlurmJob
    from cloudtrain.backends.slurm.sweep_handle import SlurmSweep


class SlurmBackend(BackendFacts):
    name = "slurm"
    facts = Facts(
        capabilities=Capabilities.of(
            {*DEFAULT_CAPABILITIES.has, Capability.CLUSTER, Capability.BUILDS_ENVIRONMENT}
        ),  # its login node's Python builds each job's environment
        section="slurm",
        settings_record=SlurmSettings,  # with the slurm: section
        location_keys=("region", "project"),  # the cluster (login destination or "local") and the workdir
        secret_kind="shell",  # shell:NAME read where sbatch runs, at submit (.job_secrets)
        storage_schemes=("gs", "s3"),  # bucket channels are downloaded once at submit (.data)
        image_region="us-central1",  # the image rules of --local
        contract=DEFAULT_CONTRACT,  # the image-version rules of --local's default, and its contract on the nodes
        list_columns=("cluster", "partition", "nodes"),
        machine_keys=("accelerator_type",),  # --gres=gpu:TYPE:N
    )
    words = Words(
        title="Slurm",
        local_data="read in place if shared, else copied into the workdir",
        bucket_data="downloaded once at submit",  # into the workdir (.data)
    )

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

    def config_checks(self, loaded: LoadedConfig) -> list[Check]:
        """The slurm: section, nodes and GPUs per node: a cluster has no catalog of regions and machines."""
        return list(slurm_checks(loaded))

    def __init__(self, *, log: Callable[[str], None] | None = None):
        self._log = log or (lambda message: print(message, file=sys.stderr, flush=True))

    def _image(self, spec: JobSpec, found: tuple[Find, Probe | None] | None = None) -> tuple[Image, cuda.GpuBuild]:
        """The slim image layer (a cluster has no cloud image), named by ``slurm.python`` so its key and paths need no
        interpreter asked (a dry run prints them); ``found`` (at submit): how the interpreter that builds it is found.
        With GPUs, TensorFlow with its CUDA wheels unless ``slurm.setup`` loads CUDA."""
        named = slurm_section(spec).python
        if found is None:  # --local's local.python is not the cluster's
            spec, found = replace(spec, local_python=None), (lambda version, _: Interpreter(named, version), None)
        image = runner_image.image_for(spec, *found, slim=True)
        count = spec.machine.accelerator_count
        gpus = f"{count} GPU{'s' if count != 1 else ''} per node" if count else None
        build = cuda.gpu_build(image.packages, gpus=gpus, cuda_from=cuda.cuda_module(slurm_section(spec).setup))
        return replace(image, packages=build.packages, named=named), build

    def _python(self, spec: JobSpec, package: BuiltPackage) -> str:
        image, _ = self._image(spec)
        return str(env_keys.env_python(env_keys.env_dir(package, image, Path(script.workdir(spec)))))

    def render(self, spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
        """The batch script and the commands ``submit`` runs, with the environment's path on the cluster."""
        package = required(package, spec.job_name)  # a Slurm job always runs a package (no container:)
        python = self._python(spec, package)
        paths = script.Paths.of(spec, python)
        channels, data_steps = data.planned(spec)
        sbatch = remote_argv(slurm_section(spec).login, script.sbatch_command(paths))
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
            "tasks": (
                self._on_cluster().script_tasks(spec, package, python, channels)
                if spec.package.script
                else tasks_shown(spec, python)
            ),
        }
        return request if spec.sweep is None else self._on_cluster().sweep_request(request, spec, package)

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> SlurmJob | SlurmSweep:
        return self._on_cluster().submit(spec, package)

    def attach(self, job_id: str, *, region: str | None = None, project: str | None = None) -> SlurmJob | SlurmSweep:
        return self._on_cluster().attach(job_id, region=region, project=project)

    def attach_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> SlurmSweep:
        return self._on_cluster().attach_sweep(job_id, region=region, project=project)

    def resume_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> SlurmSweep:
        return self._on_cluster().resume_sweep(job_id, region=region, project=project)

    def parse_job_id(self, text: str) -> tuple[str, dict[str, str]] | None:
        return self._on_cluster().parse_job_id(text)

    def states_now(self, job_ids: list[str], *, region: str | None, project: str | None) -> dict[str, str]:
        return self._on_cluster().states_now(job_ids, region=region, project=project)

    def list_jobs(self, *, region: str | None = None, project: str | None = None, limit: int = 20) -> list[JobStatus]:
        return self._on_cluster().list_jobs(region=region, project=project, limit=limit)

    def _on_cluster(self) -> OnCluster:
        from cloudtrain.backends.slurm.cluster import OnCluster  # sbatch, ssh, the handles: not on a dry run

        return OnCluster(self._image, self._python, self._log)


BACKEND: Backend = SlurmBackend()  # mypy checks it is a whole Backend
