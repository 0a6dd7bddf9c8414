"""Upload a local folder to the staging bucket, content-addressed and resumable: one object per file under
``cloudtrain/data/<digest>/``, the manifest written last; objects are complete or absent, and a manifest is trusted only
when one listing shows every object it names."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from cloudtrain.data import schemes
from cloudtrain.data.manifest import PREFIX, FileEntry, Manifest, data_prefix
from cloudtrain.text.numbers import size

log = logging.getLogger("cloudtrain.data")

PARALLEL = 8  # files uploaded at once
#: (bytes done, bytes total, files done, files total), after each file.
Progress = Callable[[int, int, int, int], None]


@dataclass(frozen=True)
class FolderUpload:
    uri: str  # the prefix the job reads, ending in "/"
    files: int
    bytes: int
    files_sent: int
    bytes_sent: int
    skipped: bool  # the manifest was there and one listing showed every object: nothing was sent


def upload_channels(
    spec: Any, store: Any, *, progress: Callable[[str], Progress | None] | None = None
) -> list[FolderUpload]:
    """Upload each local-folder channel of a staged ``spec`` into ``store`` (its staging bucket)."""
    if not any(ch.kind == "local" for ch in spec.channels.values()):
        return []
    _, path = schemes.split_bucket(spec.staging_bucket or spec.job_dir)
    done = []
    for ch in spec.channels.values():
        if ch.kind == "local":
            done.append(upload_folder(ch.manifest, store, path, progress=progress(ch.name) if progress else None))
    return done


def default_progress(name: str, *, min_files: int = 50, min_bytes: int = 64 * 2**20) -> Progress:
    """A live line on a terminal; elsewhere a log line at each quarter, for large folders only."""
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


def manifest_key(staging_path: str, digest: str) -> str:
    return "/".join(p for p in (staging_path.strip("/"), PREFIX, "manifests", f"{digest}.json") if p)


def upload_folder(
    manifest: Manifest, store: Any, staging_path: str = "", *, progress: Progress | None = None
) -> FolderUpload:
    """Make ``<scheme>://<bucket>/<staging_path>/cloudtrain/data/<digest>/`` hold ``manifest``'s folder."""
    digest = manifest.digest
    prefix = data_prefix(staging_path, digest)
    uri = f"{store.scheme}://{store.bucket}/{prefix}"
    total, count = manifest.total_bytes, len(manifest.files)
    recorded = store.stat(manifest_key(staging_path, digest)) is not None
    present = {o.name: o for o in store.list(prefix)}
    if recorded and all(present.get(prefix + f.path, _GONE).size == f.size for f in manifest.files):
        log.info("data %s unchanged (%d files, %s): upload skipped, %s", manifest.root, count, size(total), uri)
        return FolderUpload(uri, count, total, 0, 0, skipped=True)
    if recorded:  # someone deleted objects under a complete upload: the manifest alone is not trusted
        log.info("data %s: the bucket lost objects of an earlier upload; sending them again", manifest.root)

    def send(entry: FileEntry) -> bool:
        key = prefix + entry.path
        if _complete(store, present.get(key), entry):
            return False
        store.upload(manifest.root / entry.path, key, entry.sha256)
        return True

    done_bytes = done_files = sent_bytes = sent_files = 0
    # Several files in flight: a folder of many small files is bound by round trips, not bandwidth.
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        futures = {pool.submit(send, entry): entry for entry in manifest.files}
        try:
            for future in as_completed(futures):
                entry = futures[future]
                if future.result():
                    sent_bytes += entry.size
                    sent_files += 1
                done_bytes += entry.size
                done_files += 1
                if progress:
                    progress(done_bytes, total, done_files, count)
        except BaseException:
            for f in futures:
                f.cancel()  # what has not started stays absent; what has finishes whole
            raise
    store.put_text(manifest_key(staging_path, digest), manifest.to_json())
    resumed = f", {count - sent_files} already there from an earlier try" if sent_files < count else ""
    log.info("data %s uploaded: %d files, %s%s → %s", manifest.root, sent_files, size(sent_bytes), resumed, uri)
    return FolderUpload(uri, count, total, sent_files, sent_bytes, skipped=False)


_GONE = FileEntry("", -1, "")  # stands in for an object the listing lacks


def _complete(store: Any, listed: Any, entry: Any) -> bool:
    """An object from an earlier, interrupted upload counts only with the right size and hash."""
    if listed is None or listed.size != entry.size:
        return False
    info = listed if listed.sha256 is not None else store.stat(listed.name)  # S3 lists no metadata
    return info is not None and info.sha256 == entry.sha256
