"""Put the sdist in the staging bucket, once per content.

The object name and its ``cloudtrain-sha256`` metadata carry the package's sha256: an object with the same checksum
is not uploaded again. A missing or unwritable bucket is one :class:`BackendError` line, before any job is created.
``STORAGE_EMULATOR_HOST`` points the client at an emulator."""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from cloudtrain.errors import BackendError, CloudSetupError
from cloudtrain.packaging import BuiltPackage
from cloudtrain.text import first_line

SHA_KEY = "cloudtrain-sha256"
CHUNK = 8 * 2**20  # larger files go up resumably in chunks of this size, with progress

Progress = Callable[[int, int], None]  # (bytes sent, total bytes)


@dataclass(frozen=True)
class Uploaded:
    uri: str
    skipped: bool  # an identical object was already there


def split_gs(uri: str) -> tuple[str, str]:
    if not uri.startswith("gs://") or "/" not in uri[5:]:
        raise BackendError(f"not a gs://bucket/object URI: {uri!r}")
    bucket, _, name = uri[5:].partition("/")
    return bucket, name


def storage_client(project: str | None, creds: Any) -> Any:
    from google.cloud import storage

    if os.environ.get("STORAGE_EMULATOR_HOST"):
        from google.auth.credentials import AnonymousCredentials

        return storage.Client(project=project or "cloudtrain-emulator", credentials=AnonymousCredentials())
    return storage.Client(project=project, credentials=creds)


def md5_b64(path: Path) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(2**20), b""):
            digest.update(block)
    return base64.b64encode(digest.digest()).decode()


class _Counting:
    """A read-only file that reports how much of it has been read."""

    def __init__(self, f: BinaryIO, total: int, progress: Progress):
        self.f, self.total, self.progress, self.sent = f, total, progress, 0

    def read(self, size: int = -1) -> bytes:
        data = self.f.read(size)
        self.sent = self.f.tell()
        self.progress(self.sent, self.total)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.f, name)


def upload_package(package: BuiltPackage, uri: str, client: Any, *, progress: Progress | None = None) -> Uploaded:
    """Upload ``package`` to ``uri`` unless that object already holds the same bytes."""
    from google.api_core import exceptions

    bucket_name, name = split_gs(uri)
    bucket = client.bucket(bucket_name)
    where = f"gs://{bucket_name}"
    try:
        if not bucket.exists():
            raise CloudSetupError(
                f"staging bucket {where} does not exist",
                f"create it (gcloud storage buckets create {where} --location REGION) or fix staging_bucket",
            )
    except exceptions.Forbidden:
        pass  # may still be writable (objectAdmin without buckets.get); the upload will tell
    blob = bucket.blob(name)
    md5 = md5_b64(package.path)
    generation = 0  # "only if absent"
    try:
        blob.reload()
        if (blob.metadata or {}).get(SHA_KEY) == package.sha256 or blob.md5_hash == md5:
            return Uploaded(uri, skipped=True)
        generation = blob.generation  # same name, other bytes: replace exactly that object
    except exceptions.NotFound:
        pass
    except exceptions.Forbidden as exc:
        raise _cannot_write(where, exc) from exc

    chunked = package.size > CHUNK  # resumable, chunk by chunk (the client retries each one)
    blob = bucket.blob(name, chunk_size=CHUNK if chunked else None)
    blob.metadata = {SHA_KEY: package.sha256}
    try:
        with open(package.path, "rb") as raw:
            f: Any = _Counting(raw, package.size, progress) if progress else raw
            blob.upload_from_file(
                f,
                size=None if chunked else package.size,  # a known size ≤ 8 MiB would force one request
                content_type="application/gzip",
                if_generation_match=generation,
                checksum="md5",
            )
    except exceptions.PreconditionFailed:
        blob.reload()  # someone uploaded it meanwhile; fine if it is the same package
        if blob.md5_hash != md5:
            raise BackendError(f"{uri} changed while uploading; submit again") from None
        return Uploaded(uri, skipped=True)
    except (exceptions.Forbidden, exceptions.Unauthorized) as exc:
        raise _cannot_write(where, exc) from exc
    except exceptions.NotFound as exc:
        raise CloudSetupError(f"staging bucket {where} does not exist", "create it or fix staging_bucket") from exc
    return Uploaded(uri, skipped=False)


def _cannot_write(where: str, exc: Any) -> BackendError:
    first = first_line(exc)
    return CloudSetupError(
        f"cannot write to staging bucket {where}: {first}",
        "the account needs roles/storage.objectAdmin (or objectCreator + objectViewer) on the bucket",
    )
