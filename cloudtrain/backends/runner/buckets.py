"""A bucket data channel read on a machine cloudtrain reaches itself (``--local``, a Slurm cluster).

The channel's bucket belongs to the backend whose own staging is that scheme (``gs://``: Vertex AI,
``s3://``: SageMaker); that backend gives a store on it with the credentials its jobs use
(``Backend.bucket_store``), found here through the registry: no backend is named or imported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cloudtrain.backend_rules import Capability
from cloudtrain.backends import usable
from cloudtrain.data import schemes
from cloudtrain.errors import UsageError
from cloudtrain.spec import DataChannel, JobSpec

if TYPE_CHECKING:
    from cloudtrain.backends.base import Backend
    from cloudtrain.data.stores import GcsStore, S3Store


def owner(kind: str) -> Backend:
    """The backend whose buckets ``kind``:// are: it stages there (its first storage scheme)."""
    for _, backend in usable():
        if Capability.STAGING in backend.facts.capabilities and backend.facts.storage_schemes[:1] == (kind,):
            return backend
    raise UsageError(f"no backend reads {kind}:// buckets", hint="install the backend that stages in them")


def bucket_store(spec: JobSpec, channel: DataChannel) -> GcsStore | S3Store:
    """A store on the channel's bucket, with the credentials that cloud's backend would use."""
    bucket, _ = schemes.split_bucket(channel.source)
    return owner(channel.kind).bucket_store(spec, bucket)
