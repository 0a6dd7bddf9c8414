"""Put the source dir in the staging bucket, once per content.

The object's key is the sdist's hash (see :func:`.request.sourcedir_uri`); its metadata
``sha256`` is the hash of the archive itself. A second submit of an unchanged package
finds the object with the same checksum and uploads nothing."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from cloudtrain.data.multipart import put_file
from cloudtrain.errors import BackendError, CloudSetupError
from cloudtrain.leftovers import temporary_dir
from cloudtrain.packaging import BuiltPackage

from .aws import error_code, translated
from .sourcedir import write_sourcedir

log = logging.getLogger("cloudtrain.sagemaker")


@dataclass(frozen=True)
class Uploaded:
    uri: str
    sha256: str  # of sourcedir.tar.gz
    size: int
    skipped: bool  # the same bytes were already there


def split_s3(uri: str) -> tuple[str, str]:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bucket, key


def check_bucket(s3: Any, bucket: str, region: str) -> None:
    """One clear line when the bucket is missing, unreachable, or in another region."""
    import botocore.exceptions

    try:
        with translated(f"checking s3://{bucket}", passing=botocore.exceptions.ClientError):
            head = s3.head_bucket(Bucket=bucket)
    except botocore.exceptions.ClientError as exc:
        code = error_code(exc)
        if code in ("404", "NoSuchBucket", "NotFound"):
            raise CloudSetupError(
                f"staging bucket s3://{bucket} does not exist",
                hint=f"create it (aws s3 mb s3://{bucket} --region {region}) or change staging_bucket",
            ) from None
        if code in ("301", "PermanentRedirect"):  # when botocore does not follow it itself
            other = exc.response.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("x-amz-bucket-region", "?")
            raise _elsewhere(bucket, other, region) from None
        if code in ("403", "AccessDenied", "Forbidden"):
            raise CloudSetupError(
                f"no access to staging bucket s3://{bucket}",
                hint="use a bucket these credentials may write to, or grant s3:PutObject on it",
            ) from None
        with translated(f"checking s3://{bucket}"):
            raise
    headers = head.get("ResponseMetadata", {}).get("HTTPHeaders", {})
    bucket_region = head.get("BucketRegion") or headers.get("x-amz-bucket-region")
    if bucket_region and bucket_region != region:
        raise _elsewhere(bucket, bucket_region, region)


def _elsewhere(bucket: str, bucket_region: str, region: str) -> BackendError:
    return CloudSetupError(
        f"staging bucket s3://{bucket} is in {bucket_region}, the job in {region}",
        hint="SageMaker reads and writes S3 in the job's region: use a bucket there",
    )


def upload_sourcedir(
    s3: Any, package: BuiltPackage, uri: str, region: str, *, script: bool = False, secrets: bool = False
) -> Uploaded:
    bucket, key = split_s3(uri)
    check_bucket(s3, bucket, region)
    with temporary_dir("sourcedir") as tmp:
        built = write_sourcedir(package, tmp / "sourcedir.tar.gz", script=script, secrets=secrets)
        if _stored_sha256(s3, bucket, key) == built.sha256:
            log.info("%s already uploaded (sha256 %s); skipped", uri, built.sha256[:12])
            return Uploaded(uri, built.sha256, built.size, skipped=True)
        with translated(f"uploading {uri}"):
            put_file(
                s3,
                built.path,
                bucket,
                key,
                {
                    "ContentType": "application/gzip",
                    "Metadata": {"sha256": built.sha256, "package-sha256": package.sha256},
                },
            )
        log.info("uploaded %s (%d bytes)", uri, built.size)
        return Uploaded(uri, built.sha256, built.size, skipped=False)


def _stored_sha256(s3: Any, bucket: str, key: str) -> str | None:
    import botocore.exceptions

    try:
        with translated(f"checking s3://{bucket}/{key}", passing=botocore.exceptions.ClientError):
            head = s3.head_object(Bucket=bucket, Key=key)
    except botocore.exceptions.ClientError as exc:
        if error_code(exc) in ("404", "NoSuchKey", "NotFound"):
            return None
        with translated(f"checking s3://{bucket}/{key}"):
            raise
    sha: str | None = head.get("Metadata", {}).get("sha256")
    return sha
