"""Bucket channels for local runs: downloaded once through the real clients, keyed by the listing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cloudtrain.backends.local.backend import fetch_bucket_channel
from cloudtrain.data import cache
from cloudtrain.errors import CredentialsError, UsageError
from cloudtrain.spec import DataChannel
from tests.backends.local.conftest import make_spec

pytestmark = pytest.mark.server


class Counting:
    """The store under test, counting downloads."""

    def __init__(self, store):
        self.store, self.downloads = store, 0

    def __getattr__(self, name):
        return getattr(self.store, name)

    def download(self, key, dest):
        self.downloads += 1
        self.store.download(key, dest)


def _put(store, tmp_path: Path, key: str, data: bytes) -> None:
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    store.upload(src, key, "-")


def test_downloaded_once_then_from_cache_and_again_when_objects_change(store, tmp_path):
    _put(store, tmp_path, "digits/train/a.npz", b"A" * 100)
    _put(store, tmp_path, "digits/train/sub/b.tfrecord", b"B" * 10)
    _put(store, tmp_path, "digits/training/other", b"not this channel")
    counting, uri = Counting(store), f"{store.scheme}://staging/digits/train"
    folder = cache.fetch(uri, tmp_path / "cache", store=counting)
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == ["a.npz", "sub/b.tfrecord"]
    assert (folder / "a.npz").read_bytes() == b"A" * 100 and counting.downloads == 2
    assert not os.access(folder / "a.npz", os.W_OK) or os.geteuid() == 0  # read-only (root may write anyway)
    assert not (folder.stat().st_mode & 0o222)

    assert cache.fetch(uri, tmp_path / "cache", store=counting) == folder and counting.downloads == 2

    _put(store, tmp_path, "digits/train/a.npz", b"C" * 100)  # same size, new content
    changed = cache.fetch(uri, tmp_path / "cache", store=counting)
    assert changed != folder and (changed / "a.npz").read_bytes() == b"C" * 100 and counting.downloads == 4
    cache.remove(changed)
    assert not changed.exists()


def test_a_single_object_and_an_empty_prefix(store, tmp_path):
    _put(store, tmp_path, "data/mnist.npz", b"M")
    folder = cache.fetch(f"{store.scheme}://staging/data/mnist.npz", tmp_path / "cache", store=store)
    assert [p.name for p in folder.iterdir()] == ["mnist.npz"]
    with pytest.raises(UsageError, match="holds no objects"):
        cache.fetch(f"{store.scheme}://staging/nothing/here", tmp_path / "cache", store=store)


def test_local_backend_fetches_an_s3_channel_with_the_aws_client(s3_store, tmp_path):
    _put(s3_store, tmp_path, "train/x.npz", b"X")
    spec = make_spec(tmp_path, cloud="sagemaker")
    folder = fetch_bucket_channel(spec, DataChannel("train", "s3://staging/train"))
    assert (folder / "x.npz").read_bytes() == b"X"


def test_local_backend_fetches_a_gcs_channel_with_the_storage_client(gcs_store, tmp_path):
    _put(gcs_store, tmp_path, "train/x.npz", b"G")
    folder = fetch_bucket_channel(make_spec(tmp_path), DataChannel("train", "gs://staging/train"))
    assert (folder / "x.npz").read_bytes() == b"G"


def test_no_aws_credentials_is_one_clear_line(aws, tmp_path, monkeypatch):
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key)
    with pytest.raises(CredentialsError) as err:
        fetch_bucket_channel(make_spec(tmp_path, cloud="sagemaker"), DataChannel("train", "s3://staging/train"))
    assert str(err.value).startswith(
        "data channel 'train' (s3://staging/train) is downloaded for a local run, "
        "and no AWS credentials found — run `aws configure`"
    )
    assert "\n" not in str(err.value)


def test_no_google_credentials_is_one_clear_line(tmp_path, monkeypatch):
    for var in ("GOOGLE_APPLICATION_CREDENTIALS", "STORAGE_EMULATOR_HOST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    with pytest.raises(CredentialsError) as err:
        fetch_bucket_channel(make_spec(tmp_path), DataChannel("train", "gs://staging/train"))
    assert "data channel 'train' (gs://staging/train)" in str(err.value)
    assert "gcloud auth application-default login" in str(err.value) and "\n" not in str(err.value)
