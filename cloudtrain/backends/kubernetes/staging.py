"""A package too big for the job's ConfigMap, staged in the config's staging bucket for the pods to fetch.

The sdist goes to ``<staging_bucket>/cloudtrain/packages/<sha256>/<file>`` (content-addressed: a second submit of
the same package uploads nothing), with the credentials of the backend whose buckets those are (found through
the registry, :mod:`cloudtrain.backends.runner.buckets`). The pods get a GET URL signed for 7 days in the job's
Secret (``CLOUDTRAIN_SDIST_URL``, never in a manifest's clear text), so a pod needs no cloud credentials of its
own; the launcher checks the sha256 before it installs. ``s3://``: a presigned URL (SigV4). ``gs://``: a V4
signed URL, where the credentials can sign (a service account's key, or one allowed to call signBlob); a user's
own login cannot, and the submit is refused in one line naming the fixes.
"""

from __future__ import annotations

from dataclasses import replace

from cloudtrain.backends.kubernetes.manifests import package_key
from cloudtrain.backends.runner.buckets import owner
from cloudtrain.data import schemes
from cloudtrain.errors import CredentialsError, UsageError
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import JobSpec

#: How long the pods may fetch the package: a job that is replaced (preempted) later refetches it.
URL_SECONDS = 7 * 24 * 3600  # SigV4's longest


def aws_region() -> str:
    """The region boto3 would use here (the profile's, ``$AWS_DEFAULT_REGION``), else us-east-1."""
    import boto3  # the AWS SDK: only when a package is staged in S3

    return boto3.session.Session().region_name or "us-east-1"


def stage(spec: JobSpec, package: BuiltPackage) -> str:
    """Upload the package (unless that key holds it already) and return a GET URL the pods can use."""
    uri = package_key(spec, package)
    kind = schemes.source_kind(uri or "")
    if uri is None or kind not in ("s3", "gs"):  # never: the caller asks only with a staging bucket
        raise UsageError("no staging bucket to stage the package in", "set staging_bucket: s3://my-bucket")
    bucket, key = schemes.split_bucket(uri)
    # the bucket's backend reads its location from the spec: a cluster's context and namespace are not one
    store = owner(kind).bucket_store(replace(spec, region=aws_region() if kind == "s3" else "", project=None), bucket)
    found = store.stat(key)
    if found is None or found.sha256 != package.sha256:
        store.upload(package.path, key, package.sha256)
    try:
        return store.signed_url(key, URL_SECONDS)
    except CredentialsError as err:
        raise UsageError(
            f"the package {package.filename} ({package.size} bytes) is too big for its ConfigMap, and it cannot be "
            f"staged in {uri.rsplit('/', 2)[0]}/: {err.message}",
            "sign with a service account's key (GOOGLE_APPLICATION_CREDENTIALS=key.json), use an s3:// "
            "staging_bucket, or leave large files out of the package",
        ) from err
