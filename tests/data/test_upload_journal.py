"""The multipart upload journal (``<cache>/uploads/*.json``): a 0-byte entry a kill left is removed,
not kept forever."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cloudtrain.data import multipart
from tests.fakes.aws import MotoAws


def test_a_0_byte_entry_is_removed_and_a_whole_dead_one_is_aborted(aws: MotoAws):
    s3 = aws.client("s3", "us-east-1")
    s3.create_bucket(Bucket="journal-bucket")
    upload = s3.create_multipart_upload(Bucket="journal-bucket", Key="cloudtrain/x.tar.gz")["UploadId"]
    folder = multipart.journal_dir()
    folder.mkdir(parents=True)
    (folder / "empty.json").write_bytes(b"")
    dead = multipart._journal("journal-bucket", "cloudtrain/x.tar.gz", upload)
    dead.write_text(json.dumps({**json.loads(dead.read_text()), "pid": 2**22 + 1}))  # a pid no process has
    assert multipart.sweep(s3, "journal-bucket") == 1
    assert sorted(os.listdir(folder)) == []
    assert s3.list_multipart_uploads(Bucket="journal-bucket").get("Uploads", []) == []


def test_a_journal_entry_is_written_whole(tmp_path: Path):
    entry = multipart._journal("b", "cloudtrain/k", "upload-1")
    assert json.loads(entry.read_text())["upload_id"] == "upload-1"
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]  # no temp file left beside it
