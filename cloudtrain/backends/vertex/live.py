"""What the Vertex AI backend does beyond rendering: upload, create, attach, list, follow, and the requests a
job's dry run never makes (a sweep's, another format's). :mod:`.backend` loads it through its one door
(``VertexBackend._live``) when one of these is called: ``--help`` and a job's ``--dry-run`` never do."""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cloudtrain.backends.base import JobStatus, region_given
from cloudtrain.backends.vertex import formats, request, settings, variables
from cloudtrain.backends.vertex.cloud_logging import CloudLoggingReader
from cloudtrain.backends.vertex.job import VertexJob
from cloudtrain.backends.vertex.jobs import JobService, to_status
from cloudtrain.backends.vertex.logs import TailPolicy
from cloudtrain.backends.vertex.retry import api_backoff
from cloudtrain.backends.vertex.tuning import render_tuning_job
from cloudtrain.backends.vertex.tuning_jobs import VertexSweep, tuning_job_name
from cloudtrain.backends.vertex.upload import CHUNK, split_gs, storage_client, upload_package
from cloudtrain.backoff import Backoff
from cloudtrain.config.yaml12 import LoadedYaml
from cloudtrain.data.stores import GcsStore
from cloudtrain.data.upload import default_progress, upload_channels
from cloudtrain.errors import UsageError
from cloudtrain.packaging import BuiltPackage, required
from cloudtrain.spec import JobSpec
from cloudtrain.text import numbers


@dataclass
class Live:
    """The calls, with the options of the :class:`~.backend.VertexBackend` that makes one for each."""

    env: Mapping[str, str]
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    wait: Callable[[Any, float], bool] | None
    policy: TailPolicy | None
    backoff: Backoff | None
    echo: Callable[[str], None]
    progress: Callable[[int, int], None] | None
    adc: list[tuple[Any, str | None]]  # the backend's: Application Default Credentials and their project, read once

    def bucket_store(self, spec: JobSpec, bucket: str) -> GcsStore:
        emulator = bool(os.environ.get(variables.STORAGE_EMULATOR_HOST))
        return GcsStore(storage_client(spec.project, None if emulator else settings.credentials()[0]), bucket)

    def translate(self, loaded: LoadedYaml) -> tuple[dict[str, Any], list[str]] | None:
        return formats.translate(loaded)

    def render_sweep(self, spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
        return render_tuning_job(spec, package)

    def submit(self, spec: JobSpec, package: BuiltPackage | None, body: dict[str, Any]) -> VertexJob | VertexSweep:
        """Upload the package and the data (unless already there), then create the job from ``body``."""
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
        project = self._project(project, settings.vertex_endpoint(region, self.env))
        return VertexSweep(self._service(region), tuning_job_name(project, region, job_id), sleep=self.sleep)

    def list_jobs(self, *, region: str | None = None, project: str | None = None, limit: int = 20) -> list[JobStatus]:
        region = region_given(region, "Vertex AI jobs are listed by region")
        project = self._project(project, settings.vertex_endpoint(region, self.env))
        jobs = self._service(region).list(request.parent(project, region), limit=limit)
        statuses = [to_status(j) for j in jobs]
        statuses.sort(key=lambda s: s.created or dt.datetime.min.replace(tzinfo=dt.timezone.utc), reverse=True)
        return statuses[:limit]

    def _handle(self, service: Any, name: str) -> VertexJob:
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
        endpoint = settings.vertex_endpoint(region, self.env)
        backoff = self.backoff or api_backoff(sleep=self.sleep)
        return JobService.connect(endpoint, self._credentials(endpoint), backoff=backoff)

    def _storage(self, name: str) -> Any:
        creds = None if self.env.get("STORAGE_EMULATOR_HOST") else self._credentials(None)
        return storage_client(_project_of(name), creds)

    def _reader(self, name: str) -> Any:
        endpoint = settings.logging_endpoint(self.env)
        return CloudLoggingReader.connect(_project_of(name), endpoint, self._credentials(endpoint))

    def _credentials(self, endpoint: settings.Endpoint | None) -> Any:
        if endpoint is not None and endpoint.local:
            return settings.anonymous()
        if not self.adc:
            self.adc.append(settings.credentials())
        return self.adc[0][0]

    def _project(self, given: str | None, endpoint: settings.Endpoint) -> str:
        adc_project = None
        if not given and not endpoint.local:
            self._credentials(endpoint)
            adc_project = self.adc[0][1] if self.adc else None
        return settings.resolve_project(given, adc_project, self.env)

    def _progress(self, size: int) -> Callable[[int, int], None] | None:
        if self.progress or size <= CHUNK or not sys.stderr.isatty():
            return self.progress

        def show(sent: int, total: int) -> None:
            end = "\n" if sent >= total else ""
            line = f"\ruploading {numbers.size(sent)} / {numbers.size(total)} ({sent * 100 // total}%)"
            print(line, end=end, file=sys.stderr)

        return show


def _project_of(name: str) -> str:
    """The project of a full job name; a handle always holds one (``attach`` expands a short id)."""
    parts = request.split_job_name(name)
    if parts is None:
        raise UsageError(f"{name}: not a full Vertex AI job name", hint="projects/P/locations/R/customJobs/ID")
    return parts[0]
