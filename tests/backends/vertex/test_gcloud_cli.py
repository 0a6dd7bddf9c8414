"""The gcloud forms against the Vertex fakes: staged under the job dir, stream only with --stream-logs.

The registered backend is swapped for one on the fakes (the SDK edge); flags → config → spec →
package → upload (gcp-storage-emulator) → create is the real path.
"""

from __future__ import annotations

import pytest

import cloudtrain.backends.vertex as vertex_module
from cloudtrain.cli import main
from tests.fakes.vertex_jobs import Script

pytestmark = pytest.mark.server

JOB = "1000"
JOB_DIR = "gs://my-bucket/ml_job_temp/mgpu_5"


@pytest.fixture
def folder(tmp_path, backend, gcs, monkeypatch):
    monkeypatch.setattr(vertex_module, "BACKEND", backend)
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text("print('hi')\n")
    (tmp_path / "config_gpu4.yaml").write_text(
        "trainingInput:\n  scaleTier: BASIC\n  master_type: complex_model_m_gpu\n"
    )
    monkeypatch.setenv("CLOUDSDK_CORE_PROJECT", "my-project")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def command(*extra):
    return [
        "ml-engine",
        "jobs",
        "submit",
        "training",
        "mgpu_32",
        "--job-dir",
        JOB_DIR + "/",
        "--runtime-version",
        "1.10",
        "--module-name",
        "trainer.task",
        "--package-path",
        "./trainer/",
        "--region",
        "us-central1",
        "--scale-tier",
        "CUSTOM",
        "--config=./config_gpu4.yaml",
        *extra,
    ]


def test_without_stream_logs_returns_once_created_and_stages_under_the_job_dir(folder, jobs, gcs, capsys):
    jobs.scripts.append(Script(timeline=[(0, "PENDING"), (10, "RUNNING"), (3600, "SUCCEEDED")]))
    code = main(command())
    out = capsys.readouterr().out
    assert code == 0 and f"Job {JOB} created" in out and f"cloudtrain logs {JOB} --follow" in out
    job = jobs.jobs[JOB]
    assert job.display_name == "mgpu_32" and job.state.name != "JOB_STATE_SUCCEEDED"  # not followed
    pool = job.job_spec.worker_pool_specs[0]
    uri = pool.python_package_spec.package_uris[0]
    assert uri.startswith(f"{JOB_DIR}/packages/") and list(pool.python_package_spec.args) == [f"--job-dir={JOB_DIR}"]
    blobs = [b.name for b in gcs.list_blobs("my-bucket")]
    assert uri.removeprefix("gs://my-bucket/") in blobs
    assert job.job_spec.base_output_directory.output_uri_prefix == JOB_DIR


def test_stream_logs_follows_and_exits_with_the_job(folder, jobs, logging_fake, clock, capsys):
    jobs.scripts.append(Script(states=["PENDING", "RUNNING", "FAILED"], error="exit status 1: OOM"))
    code = main(command("--stream-logs"))
    captured = capsys.readouterr()
    assert code == 1 and f"error: job {JOB} ended FAILED" in captured.err


def test_custom_jobs_create_returns_once_created(folder, jobs, capsys):
    jobs.scripts.append(Script(timeline=[(0, "RUNNING"), (3600, "SUCCEEDED")]))
    code = main(
        [
            "ai",
            "custom-jobs",
            "create",
            "--region",
            "us-central1",
            "--display-name",
            "my job",
            "--worker-pool-spec",
            "machine-type=n1-standard-8,replica-count=1,executor-image-uri="
            "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest,python-module=trainer.task,"
            "local-package-path=./trainer",
            "--set",
            "staging_bucket=gs://my-bucket",
        ]
    )
    err = capsys.readouterr().err  # the name rule: letters, digits, _ and -, one line naming the flag
    assert code == 2 and err.startswith("error: --display-name: name: received 'my job'") and not jobs.jobs
    code = main(
        [
            "ai",
            "custom-jobs",
            "create",
            "--region",
            "us-central1",
            "--display-name",
            "my_job",
            "--worker-pool-spec",
            "machine-type=n1-standard-8,replica-count=1,executor-image-uri="
            "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest,python-module=trainer.task,"
            "local-package-path=./trainer",
            "--set",
            "staging_bucket=gs://my-bucket",
        ]
    )
    assert code == 0 and jobs.jobs[JOB].display_name == "my_job"
    assert "get" not in jobs.calls[jobs.calls.index("create") + 2 :]  # no following after the first status
