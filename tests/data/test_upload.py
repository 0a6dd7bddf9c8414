"""A local folder uploaded to a real S3 (moto) and Cloud Storage (emulator): once, resumable, manifest last."""

from __future__ import annotations

import pytest

from cloudtrain.data.manifest import build_manifest, data_prefix
from cloudtrain.data.upload import manifest_key, upload_folder
from tests.data.conftest import make_folder

pytestmark = pytest.mark.server

FILES = {f"part-{i:02d}.tfrecord": bytes([i]) * (1000 + i) for i in range(8)} | {"sub/labels.npz": b"L" * 50}


def _names(store, prefix):
    return sorted(o.name for o in store.list(prefix))


def _settled_count(store, prefix, quiet_s=0.5, limit_s=10.0):
    import time

    seen, since, start = _names(store, prefix), time.monotonic(), time.monotonic()
    while time.monotonic() - since < quiet_s and time.monotonic() - start < limit_s:
        time.sleep(0.05)
        now = _names(store, prefix)
        if now != seen:
            seen, since = now, time.monotonic()
    return len(seen)


def test_uploads_once_then_skips(store, tmp_path):
    manifest = build_manifest(make_folder(tmp_path / "d", FILES))
    calls = []
    first = upload_folder(manifest, store, "team", progress=lambda *a: calls.append(a))
    prefix = data_prefix("team", manifest.digest)
    assert first.uri == f"{store.scheme}://staging/{prefix}" and prefix.startswith("team/cloudtrain/data/")
    assert (first.files_sent, first.bytes_sent, first.skipped) == (9, manifest.total_bytes, False)
    assert _names(store, prefix) == sorted(prefix + p for p in FILES)
    assert store.stat(manifest_key("team", manifest.digest)) is not None
    assert calls[-1] == (manifest.total_bytes, manifest.total_bytes, 9, 9)

    second = upload_folder(manifest, store, "team")
    assert (second.skipped, second.files_sent, second.uri) == (True, 0, first.uri)


# Uploads FOLDER with the store of SCHEME (endpoints from the environment) and SIGKILLs itself
# after the third file: no handler, no finally, exactly as a killed submit.
KILLED_SUBMIT = """
import os, signal, sys
from pathlib import Path
from cloudtrain.data.manifest import build_manifest
from cloudtrain.data.upload import upload_folder
scheme, folder = sys.argv[1], Path(sys.argv[2])
if scheme == "s3":
    from cloudtrain.backends.sagemaker.aws import AwsClients, translated
    from cloudtrain.data.stores import S3Store
    store = S3Store(AwsClients("us-east-1").s3, "staging", translated)
else:
    from cloudtrain.backends.vertex.upload import storage_client
    from cloudtrain.data.stores import GcsStore
    store = GcsStore(storage_client("my-project", None), "staging")

def progress(done, total, files, count):
    if files == 3:
        os.kill(os.getpid(), signal.SIGKILL)

upload_folder(build_manifest(folder), store, progress=progress)
"""


def test_a_killed_upload_is_completed_not_trusted(store, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    from tests.conftest import REPO

    files = {f"shard-{i:03d}.npz": bytes([i]) * (2000 + i) for i in range(40)}
    folder = make_folder(tmp_path / "d", files)
    manifest = build_manifest(folder)
    prefix = data_prefix("", manifest.digest)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_SUBMIT, store.scheme, str(folder)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    # A PUT whose body was on the wire when the process died still lands a moment later (the server
    # finishes it, as the clouds do): count the objects once the listing has stopped changing.
    there = _settled_count(store, prefix)
    # some whole objects, not all: the workers go on taking files while the progress callback that kills
    # the process waits its turn, so more than 3 + PARALLEL can be whole under load
    assert 3 <= there < len(files)
    assert store.stat(manifest_key("", manifest.digest)) is None  # … and no manifest: not complete
    # An object of the right name and size but other bytes (a foreign tool, a corrupted copy) is not trusted either.
    name = next(n for n in _names(store, prefix))
    broken = tmp_path / "broken"
    broken.write_bytes(b"x" * store.stat(name).size)
    store.upload(broken, name, "0" * 64)

    resumed = upload_folder(manifest, store)
    assert (resumed.skipped, resumed.files_sent) == (False, len(files) - there + 1)  # the rest, and the broken one
    assert store.stat(manifest_key("", manifest.digest)) is not None
    for entry in manifest.files:
        assert store.stat(prefix + entry.path).sha256 == entry.sha256
    assert upload_folder(manifest, store).skipped


def test_changed_content_goes_to_a_new_prefix(store, tmp_path):
    folder = make_folder(tmp_path / "d", {"a.npz": b"1"})
    first = upload_folder(build_manifest(folder), store)
    (folder / "a.npz").write_bytes(b"2")
    second = upload_folder(build_manifest(folder), store)
    assert second.uri != first.uri and not second.skipped


def test_a_manifest_is_trusted_only_while_its_objects_are_there(store, tmp_path):
    """An object deleted under a complete upload (by hand, by a lifecycle rule) is sent again, not
    skipped because the manifest is still there (issue 27: the job's prefix held 2 of 3 files)."""
    manifest = build_manifest(make_folder(tmp_path / "d", {"a.npz": b"A" * 10, "b.npz": b"B" * 20, "c/d.npz": b"D"}))
    prefix = data_prefix("team", manifest.digest)
    upload_folder(manifest, store, "team")
    _delete(store, prefix + "b.npz")
    assert _names(store, prefix) == [prefix + "a.npz", prefix + "c/d.npz"]

    again = upload_folder(manifest, store, "team")
    assert (again.skipped, again.files_sent, again.bytes_sent) == (False, 1, 20)
    assert _names(store, prefix) == sorted(prefix + p for p in ("a.npz", "b.npz", "c/d.npz"))
    assert store.stat(prefix + "b.npz").sha256 == next(f.sha256 for f in manifest.files if f.path == "b.npz")
    assert upload_folder(manifest, store, "team").skipped


def _delete(store, key):
    if store.scheme == "s3":
        store.client.delete_object(Bucket=store.bucket, Key=key)
    else:
        store.client.bucket(store.bucket).blob(key).delete()
