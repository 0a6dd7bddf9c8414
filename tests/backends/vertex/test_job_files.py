"""A Vertex job's files (``files()``): its base output directory listed with GCS's MD5s, its event files
at ``<base>/logs/`` (AIP_TENSORBOARD_LOG_DIR), copied incrementally; a download checked against the MD5."""

from __future__ import annotations

import base64
import hashlib

import pytest

from cloudtrain.app.mirror import Mirror
from cloudtrain.app.outputs import download, list_outputs
from tests.fakes.vertex_jobs import Script

pytestmark = pytest.mark.server


def test_outputs_and_event_files_of_a_running_then_finished_job(backend, jobs, gcs, spec, package, tmp_path):
    jobs.scripts.append(Script(states=["PENDING", "RUNNING", "RUNNING", "RUNNING", "SUCCEEDED"]))
    handle = backend.submit(spec, package)
    bucket, prefix = spec.output_dir[5:].split("/", 1)
    blobs = gcs.bucket(bucket)
    blobs.blob(f"{prefix}/model/saved_model.pb").upload_from_string(b"graph" * 100)
    blobs.blob(f"{prefix}/logs/events.out.tfevents.1").upload_from_string(b"records-1;")

    files = handle.files()
    assert files.running and files.tensorboard is not None
    assert files.tensorboard.uri == f"{spec.output_dir}/logs/"
    mirror = Mirror(files.tensorboard, tmp_path / "copy")
    assert mirror.sync() == len(b"records-1;")
    blobs.blob(f"{prefix}/logs/events.out.tfevents.1").upload_from_string(b"records-1;records-2;")
    assert mirror.sync() == len(b"records-2;")

    handle.wait()
    listing = list_outputs(handle)
    assert not listing.running
    md5 = hashlib.md5(b"graph" * 100).hexdigest()
    assert [(o.path, o.file.size, o.file.checksum) for o in listing.files] == [
        ("logs/events.out.tfevents.1", 20, ("md5", hashlib.md5(b"records-1;records-2;").hexdigest())),
        ("model/saved_model.pb", 500, ("md5", md5)),
    ]
    assert base64.b64decode(blobs.get_blob(f"{prefix}/model/saved_model.pb").md5_hash).hex() == md5
    done = download(listing, tmp_path / "got")
    assert (tmp_path / "got" / "model" / "saved_model.pb").read_bytes() == b"graph" * 100
    assert sorted(done.fetched) == ["logs/events.out.tfevents.1", "model/saved_model.pb"]
