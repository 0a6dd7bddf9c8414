"""At submit: each data channel copied or downloaded to its folder on the cluster (:mod:`.data` says where)."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from cloudtrain.backends.runner.buckets import bucket_store
from cloudtrain.backends.slurm.data import data_dir, in_place, manifest_of
from cloudtrain.backends.slurm.script import workdir
from cloudtrain.backends.slurm.shell import ClusterShell
from cloudtrain.data.cache import fetch
from cloudtrain.data.manifest import Manifest, build_manifest
from cloudtrain.history import cache_dir
from cloudtrain.spec import DataChannel, JobSpec
from cloudtrain.text import counted
from cloudtrain.text.numbers import size

DATASYNC = Path(__file__).parent / "datasync.py"


def place(spec: JobSpec, shell: ClusterShell, python: str, log: Callable[[str], None]) -> dict[str, str]:
    """Each channel's folder on the cluster, copied or downloaded there as needed."""
    paths = {}
    for name, ch in spec.channels.items():
        if ch.kind != "local":
            paths[name] = _bucket(spec, ch, shell, python, log)
        elif in_place(ch.source, workdir(spec), remote=shell.remote):
            paths[name] = ch.source
        else:
            paths[name] = push(
                manifest_of(ch.source, spec.package.include), data_dir(spec), shell, python, log, name=name
            )
    return paths


def _bucket(spec: JobSpec, ch: DataChannel, shell: ClusterShell, python: str, log: Callable[[str], None]) -> str:
    store = bucket_store(dataclasses.replace(spec, region=_aws_region(), project=None), ch)
    if not shell.remote:
        return str(fetch(ch.source, Path(data_dir(spec)) / "buckets", store=store))
    local = fetch(ch.source, cache_dir() / "data", store=store)
    return push(build_manifest(local), data_dir(spec), shell, python, log, name=ch.name)


def _aws_region() -> str:
    """The region an S3 client signs for: the user's AWS configuration's, else us-east-1 (S3 redirects)."""
    import boto3  # a cloud SDK: imported only when an s3:// channel is read

    return boto3.session.Session().region_name or "us-east-1"


def push(
    manifest: Manifest, where: str, shell: ClusterShell, python: str, log: Callable[[str], None], *, name: str
) -> str:
    """``manifest``'s folder as ``<where>/<digest>`` on the cluster, sending only the files it lacks."""
    source = DATASYNC.read_text()
    listing = json.loads(manifest.to_json())
    answer = shell.run([python, "-c", source, "missing", where, manifest.digest], input=json.dumps(listing).encode())
    wanted = json.loads(answer.stdout.decode())
    dest = f"{where}/{manifest.digest}"
    if wanted.get("complete"):
        log(f"data {name}: {dest} is there already")
        return dest
    missing = set(wanted["missing"])
    sent = {f.sha256: f for f in manifest.files if f.sha256 in missing}
    log(
        f"data {name}: copying {counted(len(sent), 'file')}, {size(sum(f.size for f in sent.values()))} "
        f"of {counted(len(manifest.files), 'file')} to {dest}"
    )

    def write(stream: IO[bytes]) -> None:
        with tarfile.open(fileobj=stream, mode="w|") as tar:
            text = json.dumps(listing).encode()
            info = tarfile.TarInfo("manifest.json")
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text))
            for sha, entry in sorted(sent.items()):
                info = tarfile.TarInfo(f"objects/{sha}")
                info.size = entry.size
                with open(os.path.join(manifest.root, entry.path), "rb") as f:  # a link inside: its file
                    tar.addfile(info, f)

    shell.feed([python, "-c", source, "put", where, manifest.digest], write)
    return dest
