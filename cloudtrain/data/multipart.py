"""Put one file in S3 so that an interrupted upload leaves nothing open (and nothing billed): up to :data:`PART` bytes
one ``PutObject``, else a multipart upload journaled first and aborted on any failure; the next upload aborts orphans
(journaled ones whose process is gone, and any older than :data:`STALE_SECONDS`)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import platform  # platform.node(): the host name, as socket.gethostname() gives it, without loading socket
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cloudtrain.history import cache_dir
from cloudtrain.leftovers import pid_alive
from cloudtrain.statefiles import remove_if_empty, write_atomic

log = logging.getLogger("cloudtrain.data")

PART = 8 * 2**20  # S3 wants ≥ 5 MiB for every part but the last
KEY_PREFIX = "cloudtrain/"  # every object cloudtrain writes lives under it
STALE_SECONDS = 24 * 3600


def journal_dir() -> Path:
    return cache_dir() / "uploads"


def put_file(s3: Any, path: Path, bucket: str, key: str, extra: Mapping[str, Any]) -> None:
    """Upload ``path`` to ``s3://bucket/key`` with ``extra`` (ContentType, Metadata)."""
    sweep(s3, bucket)
    size = Path(path).stat().st_size
    if size <= PART:
        with open(path, "rb") as body:
            s3.put_object(Bucket=bucket, Key=key, Body=body, **extra)
        return
    entry = _journal(bucket, key, None)  # before the upload exists: a kill right after creating it is found
    try:
        upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key, **extra)["UploadId"]
    except BaseException:
        entry.unlink(missing_ok=True)
        raise
    _journal(bucket, key, upload_id, entry)
    try:
        parts = []
        with open(path, "rb") as f:
            for number in range(1, size // PART + 2):
                data = f.read(PART)
                if not data:
                    break
                etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=data)["ETag"]
                parts.append({"PartNumber": number, "ETag": etag})
        s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})
    except BaseException:
        if _abort(s3, bucket, key, upload_id):
            entry.unlink(missing_ok=True)
        raise
    entry.unlink(missing_ok=True)


def sweep(s3: Any, bucket: str, *, now: float | None = None) -> int:
    """Abort dead processes' journaled uploads to ``bucket`` and any older than STALE_SECONDS; how many."""
    aborted = 0
    entries = []
    for entry in sorted(journal_dir().glob("*.json")):
        if remove_if_empty(entry):  # a kill while the entry was written: no upload id to abort
            continue
        try:
            data = json.loads(entry.read_text())
            entries.append((entry, data, data["host"] == platform.node() and pid_alive(int(data["pid"]))))
        except (OSError, ValueError, KeyError, TypeError):
            entry.unlink(missing_ok=True)  # emptied or torn by a kill: nothing to act on (the age rule below
            continue  # still catches its upload)
    live_ids = {data.get("upload_id") for _, data, alive in entries if alive}
    for entry, data, alive in entries:
        try:
            if alive or data["bucket"] != bucket or data["host"] != platform.node():
                continue
            gone = (
                _abort_started(s3, bucket, data["key"], live_ids)
                if data.get("upload_id") is None
                else int(_abort(s3, bucket, data["key"], data["upload_id"]))
            )
            if gone >= 0:
                entry.unlink(missing_ok=True)
                aborted += gone
        except (KeyError, TypeError):
            entry.unlink(missing_ok=True)  # an entry without the fields it needs
    cutoff = dt.datetime.fromtimestamp((now or time.time()) - STALE_SECONDS, dt.timezone.utc)
    try:
        listed = s3.list_multipart_uploads(Bucket=bucket, Prefix=KEY_PREFIX).get("Uploads", [])
    except Exception:
        return aborted
    for upload in listed:
        if upload.get("Initiated") and upload["Initiated"] < cutoff:
            aborted += _abort(s3, bucket, upload["Key"], upload["UploadId"])
    return aborted


def _journal(bucket: str, key: str, upload_id: str | None, entry: Path | None = None) -> Path:
    """Write down an upload about to start (``upload_id`` None) or started; the entry's path."""
    if entry is None:
        name = f"{bucket}/{key}/{os.getpid()}/{time.time_ns()}"
        entry = journal_dir() / f"{hashlib.sha256(name.encode()).hexdigest()[:24]}.json"
    data = {
        "bucket": bucket,
        "key": key,
        "upload_id": upload_id,
        "pid": os.getpid(),
        "host": platform.node(),
        "started": time.time(),
    }
    write_atomic(entry, json.dumps(data))  # whole or absent: a kill here leaves no 0-byte entry
    return entry


def _abort_started(s3: Any, bucket: str, key: str, live_ids: set[str]) -> int:
    """Abort ``key``'s open uploads that no live process here journaled; how many (-1: not listable)."""
    try:
        listed = s3.list_multipart_uploads(Bucket=bucket, Prefix=key).get("Uploads", [])
    except Exception:
        return -1
    return sum(
        _abort(s3, bucket, u["Key"], u["UploadId"]) for u in listed if u["Key"] == key and u["UploadId"] not in live_ids
    )


def _abort(s3: Any, bucket: str, key: str, upload_id: str) -> bool:
    """Abort one multipart upload; True when it is gone (aborted now, or already)."""
    try:
        s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
    except Exception as exc:
        code = getattr(exc, "response", {}).get("Error", {}).get("Code")
        if code not in ("NoSuchUpload", "404"):
            log.debug("could not abort multipart upload %s of s3://%s/%s: %s", upload_id, bucket, key, exc)
            return False
    log.debug("aborted multipart upload %s of s3://%s/%s", upload_id, bucket, key)
    return True
