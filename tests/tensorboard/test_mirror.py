"""The incremental copy of a remote event folder (cloudtrain/app/mirror.py) against real stores: the
GCS emulator and moto's S3. A grown file moves by its new bytes only, a new file whole, an unchanged
one not at all, one listing per sync; a shorter file (rewritten) is fetched again whole."""

from __future__ import annotations

import pytest

from cloudtrain.app.mirror import Mirror
from cloudtrain.backends.files import BucketFolder
from cloudtrain.data.stores import GcsStore, S3Store
from cloudtrain.errors import UsageError

pytestmark = pytest.mark.server


@pytest.fixture
def gcs(monkeypatch):
    from cloudtrain.backends.vertex.upload import storage_client
    from tests.fakes.gcs import gcs_emulator

    with gcs_emulator("runs-bucket") as host:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", host)
        client = storage_client("p", None)
        bucket = client.bucket("runs-bucket")

        def put(key: str, data: bytes) -> None:
            bucket.blob(key).upload_from_string(data)

        yield GcsStore(client, "runs-bucket"), put


@pytest.fixture
def s3(aws):
    from cloudtrain.backends.sagemaker.aws import translated

    client = aws.client("s3", "us-east-1")
    client.create_bucket(Bucket="runs-bucket")

    def put(key: str, data: bytes) -> None:
        client.put_object(Bucket="runs-bucket", Key=key, Body=data)

    return S3Store(client, "runs-bucket", translated), put


@pytest.mark.parametrize("store", ["gcs", "s3"])
def test_only_new_bytes_move_and_one_listing_per_sync(store, request, tmp_path) -> None:
    bucket, put = request.getfixturevalue(store)
    first = b"event-record-1;" * 40
    put("out/job-7/logs/events.out.tfevents.1", first)
    put("out/job-7/logs/train/events.out.tfevents.2", b"train-records")
    put("out/job-7/model/saved_model.pb", b"not an event file")  # beside logs/: not copied
    folder = BucketFolder(bucket, "out/job-7/logs")
    mirror = Mirror(folder, tmp_path / "copy")

    assert mirror.sync() == len(first) + len(b"train-records")
    assert (tmp_path / "copy" / "events.out.tfevents.1").read_bytes() == first
    assert (tmp_path / "copy" / "train" / "events.out.tfevents.2").read_bytes() == b"train-records"
    assert not (tmp_path / "copy" / "model").exists()

    assert mirror.sync() == 0  # nothing changed: one listing, no read
    grown = first + b"event-record-2;"
    put("out/job-7/logs/events.out.tfevents.1", grown)
    assert mirror.sync() == len(b"event-record-2;")
    assert (tmp_path / "copy" / "events.out.tfevents.1").read_bytes() == grown

    put("out/job-7/logs/train/events.out.tfevents.2", b"new")  # rewritten shorter: fetched whole
    assert mirror.sync() == 3
    assert (tmp_path / "copy" / "train" / "events.out.tfevents.2").read_bytes() == b"new"
    assert mirror.counts.list_calls == 4 and folder.list_calls == 4
    assert mirror.counts.bytes == len(first) + len(b"train-records") + len(b"event-record-2;") + 3


def test_an_object_name_that_climbs_out_of_the_copy_is_refused(s3, tmp_path) -> None:
    bucket, put = s3
    put("logs/../../escape", b"x")
    with pytest.raises(UsageError, match="points outside"):
        Mirror(BucketFolder(bucket, "logs"), tmp_path / "copy").sync()
    assert not (tmp_path / "escape").exists()


def test_an_s3_etag_is_trusted_as_md5_only_for_an_object_kms_does_not_encrypt(s3) -> None:
    bucket, put = s3
    put("out/plain.bin", b"plain")
    bucket.client.put_object(Bucket="runs-bucket", Key="out/sealed.bin", Body=b"sealed", ServerSideEncryption="aws:kms")
    folder = BucketFolder(bucket, "out")
    listed = {f.path: f.checksum for f in folder.list()}
    assert listed["plain.bin"] == ("md5", "ac7938d40cfc2307e2bf325d28e7884e")  # the content's MD5
    assert folder.checksum_trusted("plain.bin") and not folder.checksum_trusted("sealed.bin")
