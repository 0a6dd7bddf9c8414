"""Which cloud reads which data location: pure functions on strings. Vertex AI reads ``gs://`` (FUSE, ``/gcs/…``),
SageMaker ``s3://``; a local folder is uploaded to the staging bucket first; the local backend reads all three."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from cloudtrain.backend_rules import clouds, rules

if TYPE_CHECKING:
    from cloudtrain.backend_rules.interface import BackendRules

SourceKind = Literal["gs", "s3", "local"]

#: The training code finds channel NAME at ``$SM_CHANNEL_<NAME>`` on every backend.
CHANNEL_ENV_PREFIX = "SM_CHANNEL_"
#: Where Vertex AI mounts Cloud Storage inside the training container.
GCS_FUSE_ROOT = "/gcs"


def channel_env(name: str) -> str:
    """``train`` → ``SM_CHANNEL_TRAIN`` (SageMaker's own rule: the name upper-cased)."""
    return CHANNEL_ENV_PREFIX + name.upper()


def source_kind(source: str) -> SourceKind | None:
    """``gs``, ``s3``, ``local`` (no scheme), or None for any other ``scheme://``."""
    if source.startswith("gs://"):
        return "gs"
    if source.startswith("s3://"):
        return "s3"
    return None if "://" in source else "local"


def split_bucket(uri: str) -> tuple[str, str]:
    """``s3://bucket/a/b/`` → (``bucket``, ``a/b/``)."""
    bucket, _, path = uri.split("://", 1)[1].partition("/")
    return bucket, path


def odd_segments(uri: str) -> str | None:
    """``//`` or ``/./`` where a bucket path has them, else None: keys are never rewritten, but every backend reads a
    channel as a folder, where such a segment is a typo (docs/how-to/data.md)."""
    _, path = split_bucket(uri)
    inner = path[:-1] if path.endswith("/") else path
    if not inner:
        return None
    segments = inner.split("/")
    return "//" if "" in segments else "/./" if "." in segments else None


def cleaned_bucket_uri(uri: str) -> str:
    """``s3://b//data/./x/`` → ``s3://b/data/x/``: the path a refusal of :func:`odd_segments` suggests."""
    scheme, _, rest = uri.partition("://")
    bucket, _, path = rest.partition("/")
    segments = [s for s in path.split("/") if s not in ("", ".")]
    tail = "/" if path.endswith("/") and segments else ""
    return f"{scheme}://{'/'.join([bucket, *segments])}{tail}"


def cloud_can_read(cloud: str, source: str) -> bool:
    """Can a job on ``cloud`` read ``source``? A local folder always (uploaded first); a bucket in its own scheme."""
    kind = source_kind(source)
    if kind is None:
        return False
    return kind == "local" or kind in _backend(cloud).facts.storage_schemes


def native_scheme(cloud: str) -> str:
    """The bucket scheme a cloud's own staging uses: its first storage scheme (``gs``, ``s3``)."""
    schemes: tuple[str, ...] = _backend(cloud).facts.storage_schemes
    return schemes[0]


def _backend(name: str) -> BackendRules:
    """The backend owns its schemes (the registry imports it when asked)."""
    return rules(name)


def scheme_problem(cloud: str, source: str) -> tuple[str, str] | None:
    """Why a job on ``cloud`` cannot read ``source``, and the fix; None when it can."""
    kind = source_kind(source)
    if kind is None:
        scheme = source.split("://", 1)[0]
        return (
            f"{scheme}:// is not a data location cloudtrain reads",
            "use gs://bucket/path (Vertex AI), s3://bucket/path (SageMaker) or a local folder",
        )
    if kind != "local":
        bucket, _ = split_bucket(source)
        if not bucket:
            return f"{source!r} names no bucket", f"write {kind}://BUCKET/path"
        if ".." in source.split("://", 1)[1].split("/"):
            return (
                "a bucket path has no parent folders: `..` would be sent to the cloud as part of the name",
                "write the path without `..`",
            )
        odd = odd_segments(source)
        if odd:
            return (
                f"`{odd}` in a bucket path: keys are kept as written, and no folder can show a key with "
                f"an empty or `.` segment",
                f"write {cleaned_bucket_uri(source)!r} if that is what you meant",
            )
    if cloud_can_read(cloud, source):
        return None
    name, own = _backend(cloud).words.title, native_scheme(cloud)
    other = next(c for c in clouds() if native_scheme(c) == kind)
    return (
        f"{name} cannot read {kind}:// data",
        f"copy it (gcloud storage rsync -r {source} {own}://YOUR-BUCKET/PATH) and point the channel there, "
        f"or run on backend: {other}",
    )


def gcs_fuse_path(uri: str) -> str:
    """``gs://bucket/path/`` → ``/gcs/bucket/path``: where a Vertex AI job sees it."""
    bucket, path = split_bucket(uri)
    return "/".join(p for p in (GCS_FUSE_ROOT, bucket, path.strip("/")) if p)
