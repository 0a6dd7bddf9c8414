"""The Vertex AI backend: render, submit, attach, list; the calls beyond rendering are :mod:`.live`'s."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cloudtrain.backend_rules import Capabilities, Capability, Refusal
from cloudtrain.backends.base import Backend, BackendFacts, CatalogMachines, Facts, JobStatus, Words
from cloudtrain.backends.vertex import checks, contract, cost, request
from cloudtrain.backends.vertex.job_settings import VertexSettings
from cloudtrain.catalog.cost import Cost
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.schema import JobConfig
from cloudtrain.config.yaml12 import LoadedYaml
from cloudtrain.data.staging import stage
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec

if TYPE_CHECKING:  # what only the live calls use (.live): --help and a job's --dry-run never load it
    from cloudtrain.backends.vertex.job import VertexJob
    from cloudtrain.backends.vertex.live import Live
    from cloudtrain.backends.vertex.logs import TailPolicy
    from cloudtrain.backends.vertex.tuning_jobs import VertexSweep
    from cloudtrain.backoff import Backoff
    from cloudtrain.data.stores import GcsStore

Clock = Callable[[], float]
Sleep = Callable[[float], None]


class VertexBackend(CatalogMachines, BackendFacts):
    name = "vertex"
    facts = Facts(
        required_keys=("region", "project"),
        location_keys=("project", "region"),
        storage_schemes=("gs",),
        max_runtime_seconds=7 * 86400,  # scheduling.timeout
        job_name_limit=128,  # CustomJob displayName
        capabilities=Capabilities.of(
            {
                Capability.BILLED,
                Capability.WRITES_BUCKETS,
                Capability.CONTAINERS,
                Capability.ANY_REGISTRY,
                Capability.SCRIPT_ARGS,
                Capability.MANAGED_TENSORBOARD,  # jobSpec.tensorboard
                Capability.TPUS,
                Capability.STAGING,
                Capability.FLEX_START,  # Dynamic Workload Scheduler
            },
            SPOT_MAX_WAIT=Refusal("max_wait applies to SageMaker only", "remove spot.max_wait"),
        ),
        secret_kind="gcp",  # Secret Manager, read by the launcher with the job's service account
        image_registry=re.compile(r"(^|\.)(gcr\.io|pkg\.dev)/"),
        tf_image=re.compile(r"/vertex-ai/training/tf-(?:cpu|gpu)\.(\d+)-(\d+)\.py\d+(?::|$)"),
        job_id_pattern=re.compile(r"^projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/customJobs/(?P<id>\d+)$"),
    )
    words = Words(
        title="Vertex AI",
        submit_needs="project and a gs:// staging_bucket",
        spot_basis=cost.SPOT_BASIS,
    )
    local_contract = contract.CONTRACT

    def bucket_store(self, spec: JobSpec, bucket: str) -> GcsStore:
        """A Cloud Storage bucket, read with Application Default Credentials (none for an emulator)."""
        return self._live().bucket_store(spec, bucket)

    def translate(self, loaded: LoadedYaml) -> tuple[dict[str, Any], list[str]] | None:
        """ML Engine's and CustomJob's own keys as cloudtrain's (:mod:`.formats`)."""
        return self._live().translate(loaded)

    def machine_of(self, info: Any) -> dict[str, Any]:
        """A machine type plus its accelerators: Vertex attaches GPUs to a machine type."""
        if not info.accelerator_count:
            return {"type": info.machine_type}
        return {"type": info.machine_type, "accelerator": info.accelerator, "accelerator_count": info.accelerator_count}

    def job_settings(self, config: JobConfig) -> VertexSettings:
        return VertexSettings(
            job_dir=config.job_dir.rstrip("/") if config.job_dir else None,
            service_account=config.service_account,
            network=config.network,
            flex_start=config.flex_start.enabled,
            flex_max_wait_seconds=config.flex_start.max_wait,
        )

    def cost_after(self, status: JobStatus) -> Cost | None:
        return cost.cost_after(status)

    def config_checks(self, loaded: LoadedConfig) -> list[checks.Check]:
        return checks.settings_checks(loaded)

    def contract_checks(self, loaded: LoadedConfig) -> list[checks.Check]:
        return checks.contract_checks(loaded)

    def display_name(self, config: JobConfig, run_id: str) -> str:
        """``name_suffix: false`` (the gcloud forms): the name as given; Vertex's job id is unique anyway."""
        return run_id if config.name_suffix else config.name

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        clock: Clock = time.time,
        sleep: Sleep = time.sleep,
        wait: Callable[[Any, float], bool] | None = None,
        policy: TailPolicy | None = None,
        backoff: Backoff | None = None,
        echo: Callable[[str], None] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ):
        self._env = env
        self.clock, self.sleep, self.wait = clock, sleep, wait
        self.policy, self.backoff = policy, backoff
        self.echo = echo or (lambda line: print(line, file=sys.stderr))
        self.progress = progress  # (sent, total) during large uploads; default: a line on a terminal
        self.adc: list[tuple[Any, str | None]] = []  # Application Default Credentials and their project, read once

    @property
    def env(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env

    # -- the Backend interface ---------------------------------------------------------

    def render(self, spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
        """The ``CustomJob`` (or, with a sweep, ``HyperparameterTuningJob``) that ``submit`` sends, as REST
        JSON. Pure: no I/O, no cloud SDK."""
        if spec.sweep is not None:
            return self._live().render_sweep(spec, package)
        return request.render_custom_job(spec, package)

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> VertexJob | VertexSweep:
        spec = stage(spec)
        return self._live().submit(spec, package, self.render(spec, package))

    def attach(self, job_id: str, *, region: str | None = None, project: str | None = None) -> VertexJob:
        return self._live().attach(job_id, region=region, project=project)

    def attach_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> VertexSweep:
        return self._live().attach_sweep(job_id, region=region, project=project)

    def list_jobs(self, *, region: str | None = None, project: str | None = None, limit: int = 20) -> list[JobStatus]:
        return self._live().list_jobs(region=region, project=project, limit=limit)

    def _live(self) -> Live:
        from cloudtrain.backends.vertex.live import Live  # all but rendering a job: not on --help nor a job's --dry-run

        return Live(
            self.env, self.clock, self.sleep, self.wait, self.policy, self.backoff, self.echo, self.progress, self.adc
        )


BACKEND: Backend = VertexBackend()  # mypy checks it is a whole Backend
