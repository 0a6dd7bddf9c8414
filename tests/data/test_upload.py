"""A local folder uploaded to a real S3 (moto) and Cloud Storage (emulator): once, resumable, manifest last."""

from __future__ import annotations

import pytest

from cloudtrain.data.manifest import build_manifest
from cloudtrain.data.upload import data_prefix, manifest_key, upload_folder
from tests.data.conftest import make_folder

pytestmark = pytest.mark.server

FILES = {f"part-{i:02d}.tfrecord": bytes([i]) * (1000 + i) for i in range(8)} | {"sub/labels.npz": b"L" * 50}


class Killed(Exception):
    """Stands in for Ctrl-C / a kill between two files."""


def _names(store, prefix):
    return sorted(o.name for o in store.list(prefix))


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


def test_an_interrupted_upload_is_completed_not_trusted(store, tmp_path):
    manifest = build_manifest(make_folder(tmp_path / "d", FILES))
    prefix = data_prefix("", manifest.digest)

    def kill_after_three(done, total, files, count):
        if files == 3:
            raise Killed

    with pytest.raises(Killed):
        upload_folder(manifest, store, progress=kill_after_three)
    assert len(_names(store, prefix)) == 3  # three whole objects …
    assert store.stat(manifest_key("", manifest.digest)) is None  # … and no manifest: not complete
    # An object of the right name but other bytes (a foreign tool, a corrupted copy) is not trusted either.
    broken = tmp_path / "broken"
    broken.write_bytes(b"x" * FILES["part-03.tfrecord"].__len__())
    store.upload(broken, prefix + "part-03.tfrecord", "0" * 64)

    resumed = upload_folder(manifest, store)
    assert (resumed.skipped, resumed.files_sent) == (False, 6)  # 0-2 kept; 3 replaced; 4-7 and sub/ sent
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
