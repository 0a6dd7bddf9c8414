"""Data channels on the fakes: a gs:// channel and an uploaded folder reach the CustomJob as /gcs/ paths."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from cloudtrain.spec import DataChannel
from tests.backends.vertex.conftest import make_spec
from tests.data.conftest import make_folder

pytestmark = pytest.mark.server


def _env_of(jobs, job_id: str) -> list[dict[str, str]]:
    job = jobs.jobs[job_id]
    return [{e.name: e.value for e in pool.python_package_spec.env} for pool in job.job_spec.worker_pool_specs]


def test_gcs_channel_reaches_every_replica_as_its_fuse_path(backend, jobs, gcs, package):
    spec = make_spec(channels=MappingProxyType({"train": DataChannel("train", "gs://datasets/digits/train/")}))
    handle = backend.submit(spec, package)
    envs = _env_of(jobs, handle.job_id)
    assert len(envs) == 2 and all(env["SM_CHANNEL_TRAIN"] == "/gcs/datasets/digits/train" for env in envs)


def test_local_folder_is_uploaded_once_into_the_staging_bucket(backend, jobs, gcs, package, tmp_path):
    folder = make_folder(tmp_path / "digits", {"train.npz": b"N" * 300})
    spec = make_spec(channels=MappingProxyType({"train": DataChannel("train", str(folder))}))
    first = backend.submit(spec, package)
    path = _env_of(jobs, first.job_id)[0]["SM_CHANNEL_TRAIN"]
    assert path.startswith("/gcs/my-bucket/cloudtrain/data/")
    key = path.removeprefix("/gcs/my-bucket/") + "/train.npz"
    blob = gcs.bucket("my-bucket").get_blob(key)
    generation = blob.generation
    assert blob.download_as_bytes() == b"N" * 300
    second = backend.submit(make_spec(job_name="demo-2", channels=spec.channels), package)
    assert _env_of(jobs, second.job_id)[0]["SM_CHANNEL_TRAIN"] == path
    assert gcs.bucket("my-bucket").get_blob(key).generation == generation  # not uploaded again
