"""A backend used only by the tests, proof that a backend is one folder: an in-process engine whose jobs follow
a script of states, one step per ``status`` read; its own machines (``Facts.machines``), ``Capability.CLUSTER``
(no catalog asked). Registered by one line in tests/conftest.py; tests/backends/test_contract.py runs it."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from cloudtrain.backend_rules.capabilities import DEFAULT_CAPABILITIES, Capabilities, Capability
from cloudtrain.backends.base import Backend, BackendFacts, Facts, HandleDefaults, Hardware, Words
from cloudtrain.errors import UsageError
from cloudtrain.job_states import JobState, JobStatus, LogLine
from cloudtrain.packaging import BuiltPackage, required
from cloudtrain.spec import BackendSettings, JobSpec, settings_of
from cloudtrain.statefiles import StateError

from .section import Section  # relative: the folder installs as a distribution of its own (test_plugin.py)

EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


@dataclass
class EngineJob:
    script: list[str]  # JobState values, one per status read; the last one stays
    lines: list[str]
    step: int = 0
    damaged: bool = False  # its record cannot be read: status says so, exit 2
    request: dict[str, Any] = field(default_factory=dict)


class Engine:
    """The fake scheduler: jobs by id, advanced by reads (deterministic, no clock)."""

    def __init__(self) -> None:
        self.jobs: dict[str, EngineJob] = {}
        self.next_script: tuple[list[str], list[str]] = (["PENDING", "RUNNING", "SUCCEEDED"], ["hello"])

    def create(self, request: dict[str, Any]) -> str:
        job_id = f"ex-{len(self.jobs) + 1}"
        script, lines = self.next_script
        self.jobs[job_id] = EngineJob(list(script), list(lines), request=request)
        return job_id


ENGINE = Engine()


class ExampleJob(HandleDefaults):
    backend_name = "example"

    def __init__(self, job_id: str) -> None:
        if job_id not in ENGINE.jobs:
            raise UsageError(f"no example job {job_id!r}", hint="run `cloudtrain list` for the jobs this machine knows")
        self.job_id, self._job, self._shown = job_id, ENGINE.jobs[job_id], 0

    def status(self) -> JobStatus:
        job = self._job
        if job.damaged:
            raise StateError(f"example job {self.job_id}: its record is damaged", hint="submit it again")
        native = job.script[min(job.step, len(job.script) - 1)]
        job.step += 1
        state = JobState(native)
        created = EPOCH + dt.timedelta(seconds=int(self.job_id.split("-")[1]))
        return JobStatus(
            self.job_id,
            f"example:{self.job_id}",
            state,
            native.lower(),
            created=created,
            ended=created if state.terminal else None,
            output_dir=f"/example/{self.job_id}",
            details={"step": job.step},
        )

    def _new_lines(self) -> Iterator[LogLine]:
        started = "RUNNING" in self._job.script[: self._job.step]
        ready = self._job.lines if started else []
        for message in ready[self._shown :]:
            self._shown += 1
            yield LogLine(EPOCH, "node-0", message)

    def logs(self, follow: bool = False, drain: float | None = None) -> Iterator[LogLine]:
        self._shown = 0
        yield from self._new_lines()
        while follow and not self.status().state.terminal:
            yield from self._new_lines()
        yield from self._new_lines()

    def wait(self) -> JobStatus:
        return next(status for status in iter(self.status, None) if status.state.terminal)  # each read: a step

    def cancel(self) -> JobStatus:
        self._job.script[self._job.step :] = ["CANCELLED"]
        return self.status()


@dataclass(frozen=True)
class ExampleSettings(BackendSettings):
    section: Section | None = None  # the config's example: section


class ExampleBackend(BackendFacts):
    name = "example"
    facts = Facts(
        section="example",
        storage_schemes=("file",),
        max_runtime_seconds=3600,
        job_name_limit=32,
        job_id_pattern=re.compile(r"^example:(?P<id>ex-\d+)$"),
        machines={"ex-small": Hardware(None, 0, 4, 16.0), "ex-gpu": Hardware("T4", 1, 8, 32.0)},  # in no catalog
        settings_record=ExampleSettings,
        capabilities=Capabilities.of({*DEFAULT_CAPABILITIES.has, Capability.CLUSTER}),  # no catalog's regions
    )
    words = Words(title="Example")

    def render(self, spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
        return {
            "name": spec.job_name[: self.facts.job_name_limit or None],
            "module": spec.package.module,
            "args": list(spec.args),
            "sha256": required(package, spec.job_name).sha256,
            "queue": (settings_of(spec, ExampleSettings).section or Section()).queue,  # its example: section
        }

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> ExampleJob:
        return ExampleJob(ENGINE.create(self.render(spec, package)))

    def attach(self, job_id: str, *, region: str | None = None, project: str | None = None) -> ExampleJob:
        found = self.parse_job_id(job_id)
        return ExampleJob(found[0] if found else job_id)

    def list_jobs(self, *, region: str | None = None, project: str | None = None, limit: int = 20) -> list[JobStatus]:
        return [ExampleJob(job_id).status() for job_id in reversed(ENGINE.jobs)][:limit]


BACKEND: Backend = ExampleBackend()  # mypy checks it is a whole Backend
