"""The Vertex AI backend: render, submit, attach, list (the handle of one job is :mod:`.job`)."""

from __future__ import annotations

import datetime as dt
import os
import re
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cloudtrain.backend_rules import Capabilities, Capability, Refusal
from cloudtrain.backends.base import Backend, BackendFacts, CatalogMachines, Facts, JobStatus, Words, region_given
from cloudtrain.backends.vertex import checks, contract, cost, request, settings, variables
from cloudtrain.backends.vertex.job_settings import VertexSettings
from cloudtrain.catalog.cost import Cost
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.schema import JobConfig
from cloudtrain.config.yaml12 import LoadedYaml
from cloudtrain.data.staging import default_progress, stage, upload_channels
from cloudtrain.errors import UsageError
from cloudtrain.packaging import BuiltPackage, required
from cloudtrain.spec import JobSpec
from cloudtrain.text import numbers

if TYPE_CHECKING:  # the log follower is imported by the calls that read logs: --help and --dry-run never load it
    from cloudtrain.backends.vertex.job import VertexJob
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
        from cloudtrain.backends.vertex.upload import storage_client  # the bucket client: not on --dry-run
        from cloudtrain.data.stores import GcsStore

        emulator = bool(os.environ.get(variables.STORAGE_EMULATOR_HOST))
        return GcsStore(storage_client(spec.project, None if emulator else settings.credentials()[0]), bucket)

    def translate(self, loaded: LoadedYaml) -> tuple[dict[str, Any], list[str]] | None:
        from cloudtrain.backends.vertex import formats  # ML Engine's and CustomJob's own keys: not on a dry run

        return formats.translate(loaded)

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
        self._adc: tuple[Any, str | None] | None = None

    @property
    def env(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env

    # -- the Backend interface ---------------------------------------------------------

    def render(self, spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
        """The ``CustomJob`` (or, with a sweep, ``HyperparameterTuningJob``) that ``submit`` sends, as REST
        JSON. Pure: no I/O, no cloud SDK."""
        if spec.sweep is not None:
            from cloudtrain.backends.vertex.tuning import render_tuning_job  # a sweep's: not on a job's dry run

            return render_tuning_job(spec, package)
        return request.render_custom_job(spec, package)

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> VertexJob | VertexSweep:
        from cloudtrain.backends.vertex.tuning_jobs import VertexSweep  # sweeps: not on --dry-run
        from cloudtrain.backends.vertex.upload import split_gs, storage_client, upload_package  # not on --dry-run
        from cloudtrain.data.stores import GcsStore  # the bucket client's side: not on --dry-run

        spec = stage(spec)
        body = self.render(spec, package)
        endpoint = settings.vertex_endpoint(spec.region, self.env)
        self._credentials(endpoint)  # no credentials: one error before anything is uploaded
        project = self._project(spec.project, endpoint)
        job_spec = body["trialJobSpec"] if spec.sweep is not None else body["jobSpec"]
        storage_creds = None if self.env.get("STORAGE_EMULATOR_HOST") else self._credentials(None)
        client = storage_client(project, storage_creds)
        if spec.container:  # the user's image: nothing of ours to stage
            uri = spec.package_prefix or spec.output_dir
        else:
            uri = job_spec["workerPoolSpecs"][0]["pythonPackageSpec"]["packageUris"][0]
            built = required(package, spec.job_name)
            done = upload_package(built, uri, client, progress=self._progress(built.size))
            self.echo(f"package unchanged, upload skipped: {uri}" if done.skipped else f"uploaded {uri}")
        if spec.channels:
            upload_channels(spec, GcsStore(client, split_gs(uri)[0]), progress=default_progress)
        service = self._service(spec.region)
        if spec.sweep is not None:
            return VertexSweep.create(service, request.parent(project, spec.region), body, sleep=self.sleep)
        job = service.create(request.parent(project, spec.region), body)
        return self._handle(service, job.name)

    def attach(self, job_id: str, *, region: str | None = None, project: str | None = None) -> VertexJob:
        parts = request.split_job_name(job_id)
        if parts:
            project, region, job_id = parts
        region = region_given(region, f"job {job_id}: a Vertex AI job is found by its region")
        project = self._project(project, settings.vertex_endpoint(region, self.env))
        service = self._service(region)
        return self._handle(service, request.job_name(project, region, job_id))

    def attach_sweep(self, job_id: str, *, region: str | None = None, project: str | None = None) -> VertexSweep:
        region = region_given(region, f"sweep {job_id}: a Vertex AI tuning job is found by its region")
        from cloudtrain.backends.vertex.tuning_jobs import VertexSweep, tuning_job_name  # sweeps: not on --dry-run

        project = self._project(project, settings.vertex_endpoint(region, self.env))
        return VertexSweep(self._service(region), tuning_job_name(project, region, job_id), sleep=self.sleep)

    def list_jobs(self, *, region: str | None = None, project: str | None = None, limit: int = 20) -> list[JobStatus]:
        region = region_given(region, "Vertex AI jobs are listed by region")
        project = self._project(project, settings.vertex_endpoint(region, self.env))
        jobs = self._service(region).list(request.parent(project, region), limit=limit)
        from cloudtrain.backends.vertex.jobs import to_status  # the API client's side: not on --dry-run

        statuses = [to_status(j) for j in jobs]
        statuses.sort(key=lambda s: s.created or dt.datetime.min.replace(tzinfo=dt.timezone.utc), reverse=True)
        return statuses[:limit]

    # -- wiring ------------------------------------------------------------------------

    def _handle(self, service: Any, name: str) -> VertexJob:
        from cloudtrain.backends.vertex.job import VertexJob  # the handle: not on --help or --dry-run
        from cloudtrain.backends.vertex.logs import TailPolicy  # the follower: not on --help or --dry-run

        policy = self.policy or TailPolicy(reads_per_minute=settings.log_reads_per_minute(self.env))
        reader = lambda: self._reader(name)  # noqa: E731 — connects on the first logs() call
        return VertexJob(
            service,
            name,
            reader=reader,
            policy=policy,
            clock=self.clock,
            sleep=self.sleep,
            wait=self.wait,
            storage=lambda: self._storage(name),
        )

    def _service(self, region: str) -> Any:
        from cloudtrain.backends.vertex.jobs import JobService  # the API client and its retries: not on --dry-run
        from cloudtrain.backends.vertex.retry import api_backoff

        endpoint = settings.vertex_endpoint(region, self.env)
        backoff = self.backoff or api_backoff(sleep=self.sleep)
        return JobService.connect(endpoint, self._credentials(endpoint), backoff=backoff)

    def _storage(self, name: str) -> Any:
        from cloudtrain.backends.vertex.upload import storage_client  # the bucket client: not on --dry-run

        project = _project_of(name)
        creds = None if self.env.get("STORAGE_EMULATOR_HOST") else self._credentials(None)
        return storage_client(project, creds)

    def _reader(self, name: str) -> Any:
        project = _project_of(name)
        from cloudtrain.backends.vertex.cloud_logging import CloudLoggingReader  # the log reader: not on --dry-run

        endpoint = settings.logging_endpoint(self.env)
        return CloudLoggingReader.connect(project, endpoint, self._credentials(endpoint))

    def _credentials(self, endpoint: settings.Endpoint | None) -> Any:
        if endpoint is not None and endpoint.local:
            return settings.anonymous()
        if self._adc is None:
            self._adc = settings.credentials()
        return self._adc[0]

    def _project(self, given: str | None, endpoint: settings.Endpoint) -> str:
        adc_project = None
        if not given and not endpoint.local:
            self._credentials(endpoint)
            adc_project = self._adc[1] if self._adc else None
        return settings.resolve_project(given, adc_project, self.env)

    def _progress(self, size: int) -> Callable[[int, int], None] | None:
        from cloudtrain.backends.vertex.upload import CHUNK  # uploads: not on --dry-run

        if self.progress or size <= CHUNK or not sys.stderr.isatty():
            return self.progress

        def show(sent: int, total: int) -> None:
            end = "\n" if sent >= total else ""
            line = f"\ruploading {numbers.size(sent)} / {numbers.size(total)} ({sent * 100 // total}%)"
            print(line, end=end, file=sys.stderr)

        return show


BACKEND: Backend = VertexBackend()  # mypy checks it is a whole Backend


def _project_of(name: str) -> str:
    """The project of a full job name; a handle always holds one (``attach`` expands a short id)."""
    parts = request.split_job_name(name)
    if parts is None:
        raise UsageError(f"{name}: not a full Vertex AI job name", hint="projects/P/locations/R/customJobs/ID")
    return parts[0]
