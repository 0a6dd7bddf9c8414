"""Put one file in S3 so that an interrupted upload leaves nothing open (and nothing billed).

Files up to :data:`PART` bytes go up in one ``PutObject``: complete or absent. Larger ones go
up as a multipart upload in :data:`PART`-sized parts, one after the other, and the upload is
written down first in ``<cache>/uploads/`` (bucket, key, upload id, pid, host). It is
aborted when anything fails (an error, Ctrl-C, SIGTERM); a kill that leaves no chance for
that leaves its journal entry, and the next upload from this machine aborts every journaled
upload whose process is gone. Multipart uploads under cloudtrain's own key prefix that
were started more than :data:`STALE_SECONDS` ago (from any machine) are aborted too.
A file's object is therefore complete or absent; nothing resumes half-way.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import socket
import time
from pathlib import Path
from typing import Any, Mapping

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
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key, **extra)["UploadId"]
    entry = _journal(bucket, key, upload_id)
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
    """Abort this machine's journaled uploads to ``bucket`` whose process is gone, and
    cloudtrain's uploads there older than STALE_SECONDS. Best effort; returns how many."""
    aborted = 0
    for entry in sorted(journal_dir().glob("*.json")):
        if remove_if_empty(entry):  # a kill while the entry was written: no upload id to abort
            continue
        try:
            data = json.loads(entry.read_text())
            mine = data["bucket"] == bucket and data["host"] == socket.gethostname()
            if not mine or pid_alive(int(data["pid"])):
                continue
            if _abort(s3, bucket, data["key"], data["upload_id"]):
                entry.unlink(missing_ok=True)
                aborted += 1
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a damaged entry: the age rule below still catches its upload
    cutoff = dt.datetime.fromtimestamp((now or time.time()) - STALE_SECONDS, dt.timezone.utc)
    try:
        listed = s3.list_multipart_uploads(Bucket=bucket, Prefix=KEY_PREFIX).get("Uploads", [])
    except Exception:  # noqa: BLE001 — no permission to list: the journal did what it could
        return aborted
    for upload in listed:
        if upload.get("Initiated") and upload["Initiated"] < cutoff:
            aborted += _abort(s3, bucket, upload["Key"], upload["UploadId"])
    return aborted


def _journal(bucket: str, key: str, upload_id: str) -> Path:
    folder = journal_dir()
    folder.mkdir(parents=True, exist_ok=True)
    entry = folder / f"{hashlib.sha256(upload_id.encode()).hexdigest()[:24]}.json"
    data = {"bucket": bucket, "key": key, "upload_id": upload_id, "pid": os.getpid(),
            "host": socket.gethostname(), "started": time.time()}  # fmt: skip
    write_atomic(entry, json.dumps(data))  # whole or absent: a kill here leaves no 0-byte entry
    return entry


def _abort(s3: Any, bucket: str, key: str, upload_id: str) -> bool:
    """Abort one multipart upload; True when it is gone (aborted now, or already)."""
    try:
        s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
    except Exception as exc:  # noqa: BLE001 — best effort: the next sweep tries again
        code = getattr(exc, "response", {}).get("Error", {}).get("Code")
        if code not in ("NoSuchUpload", "404"):
            log.debug("could not abort multipart upload %s of s3://%s/%s: %s", upload_id, bucket, key, exc)
            return False
    log.debug("aborted multipart upload %s of s3://%s/%s", upload_id, bucket, key)
    return True

