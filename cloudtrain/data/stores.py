"""The few bucket operations channels need (``list``, ``stat`` with cloudtrain's ``sha256``, ``upload``, ``put_text``,
``download``) over the clouds' client libraries, whose clients the backends make and hand in."""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cloudtrain.data.multipart import put_file
from cloudtrain.errors import BackendError, CredentialsError
from cloudtrain.text import first_line

SHA_KEY = "cloudtrain-sha256"  # the object's metadata key (S3 stores it as x-amz-meta-cloudtrain-sha256)


@dataclass(frozen=True)
class ObjectInfo:
    name: str
    size: int
    version: str  # what changes when the content does: the ETag (S3), the generation (GCS)
    sha256: str | None = None  # cloudtrain's own, where it wrote the object and the listing shows it
    #: The store's own checksum: ``("md5", hex)`` (GCS, single-part S3 ETag), ``("crc32c", base64)``; None: none.
    checksum: tuple[str, str] | None = None


class S3Store:
    scheme = "s3"

    def __init__(self, client: Any, bucket: str, translated: Callable[[str], AbstractContextManager[None]]):
        self.client, self.bucket, self._translated = client, bucket, translated

    def _where(self, key: str = "") -> str:
        return f"s3://{self.bucket}/{key}"

    def list(self, prefix: str) -> list[ObjectInfo]:
        out = []
        with self._translated(f"listing {self._where(prefix)}"):
            for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
                out += [_s3_info(o["Key"], o["Size"], o.get("ETag", "")) for o in page.get("Contents", [])]
        return out

    def checksum_is_md5(self, key: str) -> bool:
        """Whether the object's ETag is its content's MD5: not when KMS or a customer's key encrypts it."""
        with self._translated(f"checking {self._where(key)}"):
            head = self.client.head_object(Bucket=self.bucket, Key=key)
        return head.get("ServerSideEncryption") not in ("aws:kms", "aws:kms:dsse") and not head.get(
            "SSECustomerAlgorithm"
        )

    def read(self, key: str, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` (exclusive) of the object: one ranged GET."""
        with self._translated(f"reading {self._where(key)}"):
            body = self.client.get_object(Bucket=self.bucket, Key=key, Range=f"bytes={start}-{end - 1}")["Body"]
            data: bytes = body.read()
            return data

    def stat(self, key: str) -> ObjectInfo | None:
        import botocore.exceptions

        try:
            head = self.client.head_object(Bucket=self.bucket, Key=key)
        except botocore.exceptions.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return None
            with self._translated(f"checking {self._where(key)}"):
                raise
        etag = head.get("ETag", "").strip('"')
        return ObjectInfo(key, head["ContentLength"], etag, head.get("Metadata", {}).get(SHA_KEY))

    def upload(self, path: Path, key: str, sha256: str) -> None:
        with self._translated(f"uploading {self._where(key)}"):
            put_file(self.client, path, self.bucket, key, {"Metadata": {SHA_KEY: sha256}})  # leaves nothing open

    def put_text(self, key: str, text: str) -> None:
        with self._translated(f"writing {self._where(key)}"):
            self.client.put_object(Bucket=self.bucket, Key=key, Body=text.encode(), ContentType="application/json")

    def download(self, key: str, dest: Path) -> None:
        with self._translated(f"downloading {self._where(key)}"):
            self.client.download_file(self.bucket, key, str(dest))

    def signed_url(self, key: str, seconds: int) -> str:
        """A presigned GET of the object, good for ``seconds`` (SigV4, whatever the client's own signing: at most
        7 days), with the default credentials of the client's region and endpoint."""
        import boto3
        from botocore.config import Config

        meta = self.client.meta
        v4 = meta.config.merge(Config(signature_version="s3v4"))
        signer = boto3.session.Session().client(
            "s3", region_name=meta.region_name, endpoint_url=meta.endpoint_url, config=v4
        )
        with self._translated(f"signing a URL of {self._where(key)}"):
            params = {"Bucket": self.bucket, "Key": key}
            return str(signer.generate_presigned_url("get_object", Params=params, ExpiresIn=seconds))


class GcsStore:
    scheme = "gs"

    def __init__(self, client: Any, bucket: str):
        self.client, self.bucket = client, bucket
        self._bucket = client.bucket(bucket)

    def _where(self, key: str = "") -> str:
        return f"gs://{self.bucket}/{key}"

    def list(self, prefix: str) -> list[ObjectInfo]:
        with _gcs_errors(f"listing {self._where(prefix)}"):
            return [_info(b) for b in self.client.list_blobs(self.bucket, prefix=prefix)]

    def stat(self, key: str) -> ObjectInfo | None:
        with _gcs_errors(f"checking {self._where(key)}"):
            blob = self._bucket.get_blob(key)
        return None if blob is None else _info(blob)

    def upload(self, path: Path, key: str, sha256: str) -> None:
        blob = self._bucket.blob(key)
        blob.metadata = {SHA_KEY: sha256}
        with _gcs_errors(f"uploading {self._where(key)}"):
            blob.upload_from_filename(str(path), checksum="md5")

    def put_text(self, key: str, text: str) -> None:
        with _gcs_errors(f"writing {self._where(key)}"):
            self._bucket.blob(key).upload_from_string(text, content_type="application/json")

    def download(self, key: str, dest: Path) -> None:
        with _gcs_errors(f"downloading {self._where(key)}"):
            self._bucket.blob(key).download_to_filename(str(dest))

    def signed_url(self, key: str, seconds: int) -> str:
        """A V4 signed GET of the object, good for ``seconds``; CredentialsError where the credentials cannot
        sign (a user's login, not a service account's key or one that may call signBlob)."""
        import datetime as dt

        try:
            url = self._bucket.blob(key).generate_signed_url(
                version="v4", expiration=dt.timedelta(seconds=seconds), method="GET"
            )
        except Exception as exc:  # google-auth: AttributeError / TransportError, "you need a private key"
            raise CredentialsError(f"cannot sign a URL of {self._where(key)}: {first_line(str(exc))}") from exc
        return str(url)

    def checksum_is_md5(self, key: str) -> bool:
        return True  # Cloud Storage's md5Hash (or crc32c) is always of the content

    def read(self, key: str, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` (exclusive) of the object: one ranged read, no checksum of a part."""
        with _gcs_errors(f"reading {self._where(key)}"):
            data: bytes = self._bucket.blob(key).download_as_bytes(start=start, end=end - 1, checksum=None)
            return data


def _s3_info(key: str, size: int, etag: str) -> ObjectInfo:
    """A listed S3 object; its ETag is the content's MD5 only for a single-part upload (no ``-N`` tail)."""
    etag = etag.strip('"')
    single = etag and "-" not in etag and len(etag) == 32
    return ObjectInfo(key, size, etag, checksum=("md5", etag) if single else None)


def _info(blob: Any) -> ObjectInfo:
    checksum = ("md5", base64.b64decode(blob.md5_hash).hex()) if blob.md5_hash else None
    if checksum is None and blob.crc32c:
        checksum = ("crc32c", blob.crc32c)
    return ObjectInfo(
        blob.name, int(blob.size or 0), str(blob.generation), (blob.metadata or {}).get(SHA_KEY), checksum
    )


@contextlib.contextmanager
def _gcs_errors(action: str) -> Iterator[None]:
    """Cloud Storage errors as one line naming ``action``."""
    from google.api_core import exceptions
    from google.auth.exceptions import GoogleAuthError

    try:
        yield
    except GoogleAuthError as exc:
        raise CredentialsError(
            f"{action}: Google Cloud credentials were refused: {first_line(exc)}",
            "run `gcloud auth application-default login`",
        ) from None
    except exceptions.NotFound as exc:
        raise BackendError(f"{action}: not found ({first_line(exc)})", "check the bucket name") from None
    except (exceptions.Forbidden, exceptions.Unauthorized) as exc:
        raise BackendError(
            f"{action}: access denied ({first_line(exc)})",
            "the account needs storage.objects permissions on the bucket",
        ) from None
    except exceptions.GoogleAPICallError as exc:
        raise BackendError(f"{action}: {first_line(exc)}") from None
