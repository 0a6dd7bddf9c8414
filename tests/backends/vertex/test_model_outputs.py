"""After a Vertex job succeeds, an empty AIP_MODEL_DIR (``<base output dir>/model/``) is a warning."""

from __future__ import annotations

import pytest

from cloudtrain.backends.base import JobState
from tests.fakes.vertex_jobs import Script

pytestmark = pytest.mark.server


def _succeeded(backend, jobs, spec, package):
    jobs.scripts.append(Script(states=["PENDING", "RUNNING", "SUCCEEDED"]))
    handle = backend.submit(spec, package)
    status = handle.wait()
    assert status.state is JobState.SUCCEEDED
    return handle, status


def test_model_saved_elsewhere_is_named(backend, jobs, gcs, spec, package):
    handle, status = _succeeded(backend, jobs, spec, package)
    base = status.details["output_dir"].rstrip("/")
    assert base == spec.output_dir.rstrip("/")
    bucket, prefix = base[5:].split("/", 1)
    gcs.bucket(bucket).blob(f"{prefix}/checkpoints/ckpt-1.index").upload_from_string(b"x")
    gcs.bucket(bucket).blob(f"{prefix}/saved/digits.keras").upload_from_string(b"x")
    warning = handle.model_outputs_warning(status)
    assert warning.startswith(f"the model dir {base}/model/ is empty at the end of the run")
    assert f"{base}/saved/ (1 file)" in warning and "AIP_MODEL_DIR" in warning


def test_model_in_place_is_no_warning(backend, jobs, gcs, spec, package):
    handle, status = _succeeded(backend, jobs, spec, package)
    bucket, prefix = status.details["output_dir"].rstrip("/")[5:].split("/", 1)
    gcs.bucket(bucket).blob(f"{prefix}/model/saved_model.pb").upload_from_string(b"x")
    assert handle.model_outputs_warning(status) is None
