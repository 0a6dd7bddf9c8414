"""Real servers for the data tests: moto (S3, the ``aws`` fixture of tests/fakes/fixtures.py) and
gcp-storage-emulator (Cloud Storage)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def s3_store(aws):
    """An S3Store on the bucket ``staging`` (us-east-1), through the backend's own clients."""
    from cloudtrain.backends.sagemaker.aws import AwsClients, translated
    from cloudtrain.data.stores import S3Store

    client = AwsClients("us-east-1").s3
    client.create_bucket(Bucket="staging")
    return S3Store(client, "staging", translated)


@pytest.fixture
def gcs_host(monkeypatch):
    from tests.fakes.gcs import gcs_emulator

    with gcs_emulator("staging") as host:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", host)
        yield host


@pytest.fixture
def gcs_store(gcs_host):
    from cloudtrain.backends.vertex.upload import storage_client
    from cloudtrain.data.stores import GcsStore

    return GcsStore(storage_client("my-project", None), "staging")


@pytest.fixture(params=["s3", "gs"])
def store(request):
    """The same tests on both clouds' stores."""
    return request.getfixturevalue("s3_store" if request.param == "s3" else "gcs_store")


def make_folder(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root
