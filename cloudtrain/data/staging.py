"""Local folders in a cloud job's spec: :func:`stage` gives each its manifest and content-addressed prefix, so
``render`` stays pure; a backend's ``submit`` uploads them (:func:`cloudtrain.data.upload.upload_channels`)."""

from __future__ import annotations

import dataclasses
import hashlib
from types import MappingProxyType
from typing import Any

from cloudtrain.backend_rules import rules
from cloudtrain.data import schemes
from cloudtrain.data.manifest import build_manifest, data_prefix
from cloudtrain.text import counted
from cloudtrain.text.numbers import size


def stage(spec: Any, *, hash_cache_root: Any = None) -> Any:
    """``spec`` with every local-folder channel hashed and given its bucket prefix (backends that upload
    local folders only: :attr:`~cloudtrain.backend_rules.interface.BackendRules.words.local_data` is None)."""
    if rules(spec.backend).words.local_data is not None or not any(
        ch.kind == "local" and ch.uri is None for ch in spec.channels.values()
    ):
        return spec
    bucket = (spec.staging_bucket or spec.job_dir or "").rstrip("/")  # a job dir stands in, as for packages
    scheme = schemes.native_scheme(spec.cloud)
    staged = {}
    for name, ch in spec.channels.items():
        if ch.kind == "local" and ch.uri is None:
            cache = None
            if hash_cache_root is not None:
                cache = hash_cache_root / f"{hashlib.sha256(ch.source.encode()).hexdigest()[:16]}.json"
            manifest = build_manifest(ch.source, hash_cache=cache, include=spec.package.include)  # uploaded: checked
            bucket_name, path = schemes.split_bucket(bucket) if "://" in bucket else ("", "")
            ch = dataclasses.replace(
                ch, manifest=manifest, uri=f"{scheme}://{bucket_name}/{data_prefix(path, manifest.digest)}"
            )
        staged[name] = ch
    return dataclasses.replace(spec, channels=MappingProxyType(staged))


def describe(spec: Any) -> dict[str, str]:
    """channel → one line for the summary: where it comes from, where the job reads it, what it costs."""
    if not spec.channels:
        return {}
    backend = rules(spec.backend)
    out = {}
    for name, ch in spec.channels.items():
        if ch.kind != "local":
            out[name] = f"{ch.source} ({backend.words.bucket_data}) → ${ch.env_name}"
        elif backend.words.local_data is not None:
            out[name] = f"{ch.source} ({backend.words.local_data}) → ${ch.env_name}"
        else:
            m = ch.manifest
            out[name] = (
                f"{ch.source}: {counted(len(m.files), 'file')}, {size(m.total_bytes)} → {ch.uri} "
                f"(uploaded at submit unless already there) → ${ch.env_name}"
            )
    return out
