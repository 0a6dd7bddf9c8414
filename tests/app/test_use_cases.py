"""The use cases the CLI and the Python API share (:mod:`cloudtrain.app.submit`, :mod:`cloudtrain.app.follow`):
they print nothing, and tell what happens to the view or callbacks they are given, in order."""

from __future__ import annotations

import datetime as dt
import shutil
import textwrap
from pathlib import Path
from typing import Any, cast

import pytest

from cloudtrain.app.follow import follow_job, watch_progress
from cloudtrain.app.notices import Detached, Notice
from cloudtrain.app.plan import Plan
from cloudtrain.app.prepare import Prepared, load_spec
from cloudtrain.app.submit import SubmitOptions, load_job, submit
from cloudtrain.backends.base import JobHandle, JobState, JobStatus, LogLine
from cloudtrain.config.yaml12 import load_yaml

REPO = Path(__file__).resolve().parents[2]
T0 = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.timezone.utc)


class _Recorder:
    """A view that keeps every event it is told (the CLI's prints them)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def notice(self, notice: Notice) -> None:
        self.events.append(("notice", notice.text))

    def planned(self, prepared: Prepared, plan: Plan) -> None:
        self.events.append(("planned", (prepared.spec.region, plan.request)))

    def prepared(self, prepared: Prepared) -> None:
        self.events.append(("prepared", prepared.spec.job_name))

    def sweep(self, prepared: Prepared, *, detach: bool, cancel: bool = False) -> None:
        self.events.append(("sweep", detach))

    def created(self, launched: Any, *, here: bool) -> None:
        self.events.append(("created", here))

    def detached(self, launched: Any, reattach: str) -> None:
        self.events.append(("detached", reattach))

    def follow(self, launched: Any, *, cancel_on_interrupt: bool) -> None:
        self.events.append(("follow", cancel_on_interrupt))


def _config(tmp_path: Path, region: str, env: str = "") -> Path:
    shutil.copytree(REPO / "tests" / "packages" / "mini_trainer", tmp_path / "mini_trainer")
    path = tmp_path / "job.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        name: seam
        backend: vertex
        project: proj-{region}
        region: {region}
        machine:
          type: n1-standard-4
        staging_bucket: gs://bucket-{region}
        package:
          path: mini_trainer
          module: mini_trainer.task
        """)
        + env
    )
    return path


@pytest.mark.parametrize("region", ["us-central1", "europe-west4"])
def test_a_dry_run_is_told_to_the_view_and_prints_nothing(tmp_path, monkeypatch, capsys, region) -> None:
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    view = _Recorder()
    submit(_config(tmp_path, region, "env:\n  API_TOKEN: hunter2hunter2\n"), SubmitOptions(), view, dry_run=True)
    assert capsys.readouterr() == ("", "")
    kinds = [kind for kind, _ in view.events]
    assert kinds[-1] == "planned" and set(kinds[:-1]) == {"notice"}  # nothing created, nothing followed
    assert any("API_TOKEN" in text for kind, text in view.events if kind == "notice")
    planned_region, request = view.events[-1][1]
    assert planned_region == region
    assert request["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["machineType"] == "n1-standard-4"


def test_the_gcloud_forms_document_loads_as_a_config_file_does(tmp_path, monkeypatch) -> None:
    """A document (what the gcloud forms write from their flags) goes through the same load_spec."""
    monkeypatch.chdir(tmp_path)
    path = _config(tmp_path, "asia-east1")
    from_file = load_job(path, SubmitOptions(overrides=("machine.type=n1-standard-8",)))[1]
    document = load_yaml(path.read_text(), str(path))
    from_doc = load_spec(document, ("machine.type=n1-standard-8",))[1]
    assert (from_doc.machine.type, from_doc.region, from_doc.project) == (
        "n1-standard-8",
        "asia-east1",
        "proj-asia-east1",
    )
    assert (from_doc.machine, from_doc.package.path) == (from_file.machine, from_file.package.path)
    assert from_doc.package.path == tmp_path / "mini_trainer"  # relative paths: from the working folder


class _Handle:
    """A job that prints two lines (one with a credential), then is interrupted or ends."""

    job_id = "job-7"
    backend_name = "local"
    location: dict[str, str] = {}
    stops_gracefully = False

    def __init__(self, interrupt: bool) -> None:
        self.interrupt, self.cancelled = interrupt, False

    def status(self) -> JobStatus:
        return JobStatus(self.job_id, self.job_id, JobState.RUNNING, "RUNNING", created=T0)

    def logs(self, follow: bool = False, **kwargs: Any):
        yield LogLine(T0, "chief", "step 1")
        yield LogLine(T0, "chief", "token=AKIAABCDEFGHIJKLMNOP")
        if self.interrupt:
            raise KeyboardInterrupt

    def wait(self) -> JobStatus:
        state = JobState.CANCELLED if self.cancelled else JobState.SUCCEEDED
        return JobStatus(self.job_id, self.job_id, state, state.value, created=T0)

    def cancel(self) -> JobStatus:
        self.cancelled = True
        return self.wait()


def test_following_masks_credentials_and_returns_the_end(capsys) -> None:
    shown: list[str] = []
    status = follow_job(
        cast(JobHandle, _Handle(False)), show=lambda line: shown.append(line.message), cancel_on_interrupt=False
    )
    assert status.state is JobState.SUCCEEDED
    assert shown == ["step 1", "token=***"]
    assert capsys.readouterr() == ("", "")


def test_ctrl_c_while_following_detaches_or_cancels_as_asked() -> None:
    with pytest.raises(Detached) as detached:
        follow_job(cast(JobHandle, _Handle(True)), show=lambda line: None, cancel_on_interrupt=False)
    assert (detached.value.job_id, detached.value.reattach) == ("job-7", "cloudtrain logs job-7 --follow")
    steps: list[str] = []
    status = follow_job(
        cast(JobHandle, _Handle(True)), show=lambda line: None, cancel_on_interrupt=True, on_stop=steps.append
    )
    assert (status.state, steps) == (JobState.CANCELLED, ["cancelling"])


def test_progress_of_a_reattach_starts_at_the_jobs_own_creation() -> None:
    progress = watch_progress(cast(JobHandle, _Handle(False)))
    assert progress.started == T0.timestamp() and progress.cost_per_hour is None
