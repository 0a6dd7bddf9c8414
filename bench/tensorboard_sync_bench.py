"""``cloudtrain tensorboard`` on a running cloud job: what the incremental copy moves and how often it lists.

A run's event file grows by one epoch's records every second for ``--minutes`` (default 10) in a real
store (moto's S3 server and the GCS emulator, each over HTTP on 127.0.0.1): each second the whole object
is written again, one record longer, as TensorFlow's writers do on a bucket. The copy
(:class:`cloudtrain.app.mirror.Mirror`) syncs every ``REFRESH_S`` seconds, as ``cloudtrain tensorboard``
does. The clock is compressed: the writer's seconds and the refresh ticks are counted, not slept, so the
bytes and calls are those of the real schedule (only the wall time is shorter). A second run shows what a
full re-download per refresh would have moved, for comparison.

    python -m bench.tensorboard_sync_bench [--minutes 10] [--record-bytes 180] [--json PATH]

Targets (issue #43): only the new bytes move; at most 6 list calls a minute.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cloudtrain.app.mirror import Mirror
from cloudtrain.app.tensorboard import REFRESH_S
from cloudtrain.backends.files import BucketFolder

Put = Callable[[str, bytes], None]


@contextmanager
def s3_store() -> Iterator[tuple[Any, Put]]:
    from cloudtrain.backends.sagemaker.aws import translated
    from cloudtrain.data.stores import S3Store
    from tests.fakes.aws import moto_server

    with moto_server() as moto:
        client = moto.client("s3", "us-east-1")
        client.create_bucket(Bucket="bench")
        yield (
            S3Store(client, "bench", translated),
            lambda key, body: client.put_object(Bucket="bench", Key=key, Body=body),
        )


@contextmanager
def gcs_store() -> Iterator[tuple[Any, Put]]:
    import os

    from cloudtrain.data.stores import GcsStore
    from tests.fakes.gcs import gcs_emulator

    with gcs_emulator("bench") as host:
        os.environ["STORAGE_EMULATOR_HOST"] = host
        from cloudtrain.backends.vertex.upload import storage_client

        client = storage_client("bench", None)
        bucket = client.bucket("bench")
        yield GcsStore(client, "bench"), lambda key, body: bucket.blob(key).upload_from_string(body)


def run(store: Any, put: Put, *, seconds: int, record_bytes: int, whole: bool) -> dict[str, Any]:
    """The schedule: a record a second, a sync every REFRESH_S seconds and once at the end."""
    record = bytes(range(256)) * (record_bytes // 256 + 1)
    folder = BucketFolder(store, "run/logs")
    with tempfile.TemporaryDirectory() as tmp:
        mirror = Mirror(folder, Path(tmp) / "copy")
        body = b"header-record;" * 4
        put("run/logs/events.out.tfevents.1", body)
        refresh = int(REFRESH_S)
        for second in range(1, seconds + 1):
            body += record[:record_bytes]
            put("run/logs/events.out.tfevents.1", body)
            if second % refresh == 0:
                if whole:  # what a copy without offsets would do: the file again, whole
                    (Path(tmp) / "copy" / "events.out.tfevents.1").unlink(missing_ok=True)
                mirror.sync()
        mirror.sync()
        copied = (Path(tmp) / "copy" / "events.out.tfevents.1").read_bytes()
    assert copied == body, "the copy differs from the store's file"
    minutes = seconds / 60
    return {
        "written_bytes": len(body),
        "moved_bytes": mirror.counts.bytes,
        "moved_per_written": round(mirror.counts.bytes / len(body), 3),
        "list_calls": mirror.counts.list_calls,
        "list_calls_per_minute": round(mirror.counts.list_calls / minutes, 2),
        "read_calls": mirror.counts.read_calls,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--record-bytes", type=int, default=180, help="one second's records (a few scalars)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--quick", action="store_true", help="one minute of the event file's life, not ten")
    args = parser.parse_args(argv)
    seconds = int((1 if args.quick else args.minutes) * 60)
    out: dict[str, Any] = {"seconds": seconds, "record_bytes": args.record_bytes, "refresh_s": REFRESH_S}
    for name, store in (("s3 (moto)", s3_store), ("gcs (emulator)", gcs_store)):
        with store() as (bucket, put):
            out[name] = {
                "incremental": run(bucket, put, seconds=seconds, record_bytes=args.record_bytes, whole=False),
                "whole file each refresh": run(
                    bucket, put, seconds=seconds, record_bytes=args.record_bytes, whole=True
                ),
            }
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
