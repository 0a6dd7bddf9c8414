"""The Vertex backend end to end over 127.0.0.1: real client libraries, fake JobService and
Cloud Logging gRPC servers, the GCS emulator, and a virtual clock (no test waits for real)."""

from __future__ import annotations

import itertools

import grpc
import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.backends.vertex import VertexBackend
from cloudtrain.errors import BackendError, CredentialsError, UsageError
from tests.backends.vertex.conftest import make_package, make_spec
from tests.fakes.cloud_logging import write_lines
from tests.fakes.vertex_jobs import Script

pytestmark = pytest.mark.server

FIRST_JOB = "1000"  # the fake numbers jobs from 1000
R0, R1 = "workerpool0-0", "workerpool1-0"


def by_replica(lines) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in lines:
        out.setdefault(line.replica, []).append(line.message)
    return out


def two_replica_job(jobs, logging_fake, t0: float) -> dict[str, list[str]]:
    """PENDING 30 s → RUNNING → SUCCEEDED at 150 s (after ~10 s of teardown).

    Both replicas log; replica 0's agent ships every 5 s (lines up to 7 s late), replica 1's
    every 10 s and 20 s behind (up to 30 s late: gcloud's 5 s cut-off would drop them all).
    """
    jobs.scripts.append(Script(timeline=[(0, "PENDING"), (30, "RUNNING"), (150, "SUCCEEDED")]))
    return {
        R0: write_lines(logging_fake, FIRST_JOB, R0, start=t0 + 31, end=t0 + 140, every=0.5, seed=1),
        R1: write_lines(
            logging_fake, FIRST_JOB, R1, start=t0 + 31.3, end=t0 + 118, every=0.7, flush_every=10, delay=20, seed=2
        ),
    }


def test_two_replicas_late_and_out_of_order_every_line_once_in_order(
    backend, jobs, logging_fake, gcs, spec, package, clock
):
    expected = two_replica_job(jobs, logging_fake, clock.time())
    handle = backend.submit(spec, package)
    assert handle.job_id == FIRST_JOB
    assert handle.console_url.endswith(f"/training/{FIRST_JOB}/cpu?project=my-project")

    lines = list(handle.logs(follow=True))
    final = handle.wait()

    assert by_replica(lines) == expected  # every line, exactly once, in order per replica
    assert len(lines) == sum(map(len, expected.values()))
    assert final.state is JobState.SUCCEEDED and final.state.exit_code == 0
    assert final.native_state == "JOB_STATE_SUCCEEDED" and final.message is None
    assert 110 <= final.details["run_seconds"] <= 125  # RUNNING at 30 s, SUCCEEDED at 150 s, seen by polling
    assert {line.severity for line in lines} == {"INFO"}
    # the arrival was out of order across replicas: R1's first line came after R0 had shown many
    first_r1 = next(i for i, line in enumerate(lines) if line.replica == R1)
    assert first_r1 > 20
    # the follower ended promptly after the job did, within the read budget
    quiet = clock.time() - jobs.jobs[FIRST_JOB].end_time.timestamp()
    assert 60 <= quiet < 75  # the stop rule: 60 quiet seconds (the default drain), then stop
    reads = [r.at for r in logging_fake.reads]
    assert max(sum(1 for t in reads if a <= t < a + 60) for a in reads) <= 55


def test_failed_job_gives_its_error_and_a_nonzero_exit(backend, jobs, logging_fake, gcs, spec, package, clock):
    jobs.scripts.append(Script(states=["PENDING", "RUNNING", "RUNNING", "FAILED"], error="exit status 1: OOM"))
    logging_fake.add(FIRST_JOB, R0, "Traceback (most recent call last):", at=clock.time() + 2, severity="ERROR")
    handle = backend.submit(spec, package)
    lines = list(handle.logs(follow=True))
    status = handle.wait()
    assert [(line.severity, line.message) for line in lines] == [("ERROR", "Traceback (most recent call last):")]
    assert status.state is JobState.FAILED and status.state.exit_code != 0
    assert status.message == "exit status 1: OOM"
    assert status.details["error_code"] == 3


def test_cancel_then_wait_for_it_to_take(backend, jobs, gcs, spec, package):
    jobs.scripts.append(Script(states=["RUNNING"], cancel_gets=2))
    handle = backend.submit(spec, package)
    assert handle.status().state is JobState.RUNNING
    assert handle.cancel().state is JobState.STOPPING
    final = handle.wait()
    assert final.state is JobState.CANCELLED and final.state.exit_code == 130
    assert jobs.calls.count("cancel") == 1
    handle.cancel()  # cancelling an ended job is not an error


def test_reattach_after_interrupt_shows_everything_once(backend, jobs, logging_fake, gcs, spec, package, clock):
    expected = two_replica_job(jobs, logging_fake, clock.time())
    handle = backend.submit(spec, package)
    stream = handle.logs(follow=True)
    seen = list(itertools.islice(stream, 40))
    stream.close()  # what Ctrl-C does to the CLI's loop: the job goes on
    assert "cancel" not in jobs.calls

    again = backend.attach(handle.job_id, region="us-central1", project="my-project")
    assert again.status().state is JobState.RUNNING
    rest = list(again.logs(follow=True))
    assert by_replica(rest) == expected  # a reattach replays from the start, once each
    assert [line.message for line in seen] == [line.message for line in rest[:40]]
    by_name = backend.attach(handle.name, region="ignored-when-a-full-name-is-given")
    assert backend.attach(handle.name).job_id == handle.job_id  # a full name carries its region: no --region
    assert by_name.status().state is JobState.SUCCEEDED
    assert by_replica(by_name.logs()) == expected  # logs without --follow: one pass


@pytest.mark.parametrize("fault", ["lost", "unavailable"])
def test_unavailable_on_first_create_makes_one_job(backend, jobs, gcs, spec, package, fault):
    jobs.create_faults.append(fault)
    handle = backend.submit(spec, package)
    assert len(jobs.jobs) == 1 and handle.job_id == FIRST_JOB
    assert jobs.calls[:2] == ["create", "list"]  # looked for the job by its submit label first
    assert jobs.calls.count("create") == (1 if fault == "lost" else 2)


def test_429_on_log_reads_slows_polling_and_loses_no_line(backend, jobs, logging_fake, gcs, spec, package, clock):
    expected = two_replica_job(jobs, logging_fake, clock.time())
    handle = backend.submit(spec, package)
    lines = []
    for line in handle.logs(follow=True):
        lines.append(line)
        if len(lines) == 50:
            logging_fake.faults = [grpc.StatusCode.RESOURCE_EXHAUSTED] * 3
    assert by_replica(lines) == expected
    reads = logging_fake.reads
    throttled = [i for i, r in enumerate(reads) if r.status == "RESOURCE_EXHAUSTED"]
    assert len(throttled) == 3
    after = [reads[i + 1].at - reads[i].at for i in throttled]
    assert min(after) >= 2.5 and after[1:] == pytest.approx([8, 16], abs=0.01)
    ok_gaps = [b.at - a.at for a, b in itertools.pairwise(reads) if a.status == "OK" and a.at < reads[throttled[0]].at]
    assert min(after[1:]) >= 4 * max(ok_gaps[-5:])  # far slower than just before the 429s


def test_second_submit_of_unchanged_package_skips_upload(backend, gcs, spec, package, tmp_path):
    backend.submit(spec, package)
    backend.submit(make_spec(job_name="demo-20240501-120500"), package)
    uri = f"gs://my-bucket/cloudtrain/packages/{package.sha256}/{package.filename}"
    assert backend.echoed == [f"uploaded {uri}", f"package unchanged, upload skipped: {uri}"]
    blob = gcs.bucket("my-bucket").get_blob(f"cloudtrain/packages/{package.sha256}/{package.filename}")
    assert blob.download_as_bytes() == package.path.read_bytes()
    assert blob.metadata == {"cloudtrain-sha256": package.sha256}

    (tmp_path / "other").mkdir()
    changed = make_package(tmp_path / "other", b"other bytes")
    backend.submit(spec, changed)
    assert backend.echoed[-1].startswith("uploaded gs://my-bucket/cloudtrain/packages/" + changed.sha256)


def test_large_upload_reports_progress(backend, gcs, spec, tmp_path, monkeypatch):
    from cloudtrain.backends.vertex import upload

    monkeypatch.setattr(upload, "CHUNK", 256 * 1024)  # resumable, in chunks, like a big package
    seen: list[tuple[int, int]] = []
    backend.progress = lambda sent, total: seen.append((sent, total))
    big = make_package(tmp_path, bytes(range(256)) * 4096)  # 1 MiB
    backend.submit(spec, big)
    assert seen[-1] == (big.size, big.size) and len({s for s, _ in seen}) >= 4
    blob = gcs.bucket("my-bucket").get_blob(f"cloudtrain/packages/{big.sha256}/{big.filename}")
    assert blob.size == big.size


def test_missing_bucket_is_one_line_and_nothing_is_created(backend, jobs, gcs, package):
    with pytest.raises(BackendError) as err:
        backend.submit(make_spec(staging_bucket="gs://no-such-bucket"), package)
    assert "staging bucket gs://no-such-bucket does not exist" in str(err.value)
    assert "\n" not in str(err.value)
    assert jobs.calls == []


def test_no_credentials_says_how_to_get_them(tmp_path, monkeypatch, spec, package):
    for var in ("GOOGLE_APPLICATION_CREDENTIALS", "CLOUDTRAIN_VERTEX_ENDPOINT", "STORAGE_EMULATOR_HOST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))  # no gcloud ADC file
    monkeypatch.setenv("NO_GCE_CHECK", "True")  # and no metadata server
    with pytest.raises(CredentialsError) as err:
        VertexBackend().submit(spec, package)
    assert "gcloud auth application-default login" in str(err.value) and "\n" not in str(err.value)


def test_list_jobs_newest_first_and_status_details(backend, jobs, gcs, spec, package, clock):
    backend.submit(spec, package)
    clock.sleep(60)
    backend.submit(make_spec(job_name="demo-20240501-120100"), package)
    listed = backend.list_jobs(region="us-central1", project="my-project")
    assert [s.job_id for s in listed] == ["1001", "1000"]
    assert listed[0].details["display_name"] == "demo-20240501-120100"
    assert listed[0].details["labels"]["team"] == "vision"
    assert listed[0].console_url == listed[0].details["console_url"]
    assert backend.list_jobs(region="us-central1", project="my-project", limit=1)[0].job_id == "1001"


def test_unknown_job_is_one_line(backend, jobs):
    with pytest.raises(BackendError, match="no such Vertex AI job"):
        backend.attach("999", region="us-central1", project="my-project").status()


def test_submit_sends_exactly_the_rendered_request(backend, jobs, gcs, spec, package):
    from google.protobuf import json_format

    from cloudtrain.backends.vertex.jobs import custom_job_message

    handle = backend.submit(spec, package)
    sent = type(jobs.jobs[handle.job_id]).pb(jobs.jobs[handle.job_id])
    rendered = type(custom_job_message({})).pb(custom_job_message(backend.render(spec, package)))
    for server_side in ("name", "state", "create_time", "start_time", "end_time", "error"):
        sent.ClearField(server_side)
    assert json_format.MessageToDict(sent) == json_format.MessageToDict(rendered) == backend.render(spec, package)


def test_unwritable_bucket_is_one_line(package):
    """403 on the upload (the emulator has no permissions, so the client is a stub at the SDK edge)."""
    from google.api_core import exceptions

    from cloudtrain.backends.vertex.upload import upload_package

    class Blob:
        metadata = None

        def reload(self):
            raise exceptions.NotFound("no such object")

        def upload_from_file(self, *args, **kwargs):
            raise exceptions.Forbidden(
                "POST https://storage.googleapis.com/upload: 403 caller lacks storage.objects.create"
            )

    class Bucket:
        def exists(self):
            raise exceptions.Forbidden("403 caller lacks storage.buckets.get")

        def blob(self, name, chunk_size=None):
            return Blob()

    class Client:
        def bucket(self, name):
            return Bucket()

    with pytest.raises(BackendError) as err:
        upload_package(package, f"gs://locked/cloudtrain/packages/{package.sha256}/{package.filename}", Client())
    assert str(err.value).startswith("cannot write to staging bucket gs://locked: 403")
    assert "storage.objectAdmin" in str(err.value) and "\n" not in str(err.value)


def test_resume_writes_under_the_continued_jobs_base_output_dir(backend, jobs, gcs, spec, package):
    """`submit --resume JOB`: AIP_CHECKPOINT_DIR of the new job is JOB's, found through JOB itself."""
    from cloudtrain.app.prepare import resumed

    first = backend.submit(spec, package)
    later = resumed(
        make_spec(job_name="demo-20240501-130000", output_dir=spec.output_dir + "-other"), backend, first.job_id
    )
    assert later.resume is not None
    assert later.resume.checkpoint_dir == spec.output_dir.rstrip("/") + "/checkpoints"
    second = backend.submit(later, package)
    assert jobs.jobs[second.job_id].job_spec.base_output_directory.output_uri_prefix == spec.output_dir


def test_a_container_job_uploads_nothing_and_sends_its_container_spec(backend, jobs, gcs):
    from cloudtrain.spec import ContainerSpec

    spec = make_spec(container=ContainerSpec("gcr.io/p/t:1", ("python", "train.py")), image_uri="gcr.io/p/t:1")
    handle = backend.submit(spec, None)
    sent = jobs.jobs[handle.job_id]
    pool = type(sent).pb(sent).job_spec.worker_pool_specs[0]
    assert pool.container_spec.image_uri == "gcr.io/p/t:1" and list(pool.container_spec.command) == [
        "python",
        "train.py",
    ]
    assert not pool.HasField("python_package_spec")
    assert list(gcs.bucket("my-bucket").list_blobs()) == []


def test_a_vertex_job_is_provisioning_from_its_creation(backend, jobs, gcs, spec, package):
    """Vertex's API gives no time for leaving its queue: the timeline starts in provisioning, as the backend says."""
    from cloudtrain.following import timeline

    jobs.scripts.append(Script(states=["PENDING"]))
    status = backend.submit(spec, package).status()
    assert status.first_phase == "provisioning"
    assert timeline.status_marks(status) == {"provisioning": status.created}


def test_attach_sweep_without_a_region_is_one_line():
    """A Vertex tuning job lives in a region: without one, a usage error names the flag (not a TypeError)."""
    with pytest.raises(UsageError, match="--region"):
        VertexBackend(env={}).attach_sweep("123", region=None)
