"""Local folders in a cloud job's spec: :func:`stage` (shared by dry run and submit) gives each its manifest and
content-addressed prefix, so ``render`` stays pure; :func:`upload_channels` is what a backend's ``submit`` calls."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import sys
from collections.abc import Callable
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from cloudtrain.backend_rules import rules
from cloudtrain.data import schemes
from cloudtrain.data.manifest import build_manifest, data_prefix
from cloudtrain.text import counted
from cloudtrain.text.numbers import size

if TYPE_CHECKING:  # uploading (concurrent.futures) is imported by the call that does it: not on a dry run
    from cloudtrain.data.upload import FolderUpload, Progress


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


def upload_channels(
    spec: Any, store: Any, *, progress: Callable[[str], Progress | None] | None = None
) -> list[FolderUpload]:
    """Upload each local-folder channel of a staged ``spec`` into ``store`` (its staging bucket)."""
    if not any(ch.kind == "local" for ch in spec.channels.values()):
        return []
    from cloudtrain.data.upload import upload_folder

    _, path = schemes.split_bucket(spec.staging_bucket or spec.job_dir)
    done = []
    for ch in spec.channels.values():
        if ch.kind == "local":
            done.append(upload_folder(ch.manifest, store, path, progress=progress(ch.name) if progress else None))
    return done


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


def default_progress(name: str, *, min_files: int = 50, min_bytes: int = 64 * 2**20) -> Progress:
    """A live line on a terminal; elsewhere a log line at each quarter, for large folders only."""
    log = logging.getLogger("cloudtrain.data")
    shown = [-1]

    def show(done: int, total: int, files: int, count: int) -> None:
        if count < min_files and total < min_bytes:
            return
        pct = done * 100 // total if total else 100
        line = f"data {name}: {files}/{count} files, {size(done)} / {size(total)} ({pct}%)"
        if sys.stderr.isatty():
            print("\r" + line, end="\n" if files == count else "", file=sys.stderr, flush=True)
        elif pct // 25 > shown[0]:
            shown[0] = pct // 25
            log.info(line)

    return show
