"""Data channels of a Slurm job: the folder on the cluster each task reads at ``$SM_CHANNEL_<NAME>``.

- A folder on the workdir's filesystem (the shared one), or, through a login node, a path that is not
  on this machine: a path every node sees, read in place.
- Any other folder on this machine: copied into ``<workdir>/data/`` by content (the core's
  :mod:`cloudtrain.data.manifest`): each file once in ``data/objects/<sha256>``, the folder as hard
  links in ``data/<digest>/``. Only files the cluster lacks are sent (over the login node's ssh
  connection when ``slurm.login`` is set); the next job with the same content reuses the folder.
- A bucket (``gs://``, ``s3://``): downloaded once with the clouds' client libraries and the core's
  :mod:`cloudtrain.data.cache` (keyed by the object listing), straight into ``<workdir>/data/buckets/``
  on this machine when it is the login node, else into the local cache and then copied as a folder.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from cloudtrain.backends.runner.buckets import bucket_store
from cloudtrain.backends.slurm.job_settings import slurm_section
from cloudtrain.backends.slurm.script import workdir
from cloudtrain.data.cache import fetch
from cloudtrain.data.manifest import Manifest, build_manifest
from cloudtrain.history import cache_dir
from cloudtrain.spec import DataChannel, JobSpec
from cloudtrain.text import counted
from cloudtrain.text.numbers import size

if TYPE_CHECKING:
    from cloudtrain.backends.slurm.shell import ClusterShell  # given by the caller: no process started here

DATASYNC = Path(__file__).parent / "datasync.py"


def data_dir(spec: JobSpec) -> str:
    return f"{workdir(spec)}/data"


def in_place(source: str, workdir: str, *, remote: bool) -> bool:
    """Whether the nodes read ``source`` where it is: on the workdir's (shared) filesystem here, or,
    through a login node, a path this machine does not have (one on the cluster)."""
    if remote:
        return not Path(source).exists()
    return _device(Path(source)) == _device(Path(workdir))


def _device(path: Path) -> int:
    """The filesystem of ``path``, or of its nearest existing folder (a workdir made at submit)."""
    for folder in (path, *path.parents):
        if folder.exists():
            return folder.stat().st_dev
    return -1


def manifest_of(source: str, include: tuple[str, ...] = ()) -> Manifest:
    """The folder's content, with the core's per-file hash cache (a large folder is not re-read); credential
    files in it are refused unless ``include`` (``--include``) names them, as for every uploaded folder."""
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    return build_manifest(Path(source), hash_cache=cache_dir() / "data-hashes" / f"{key}.json", include=include)


def planned(spec: JobSpec) -> tuple[dict[str, str], list[str]]:
    """For the dry run: each channel's folder on the cluster (a bucket's is known after its listing)
    and one line per copy or download a submit would make."""
    remote = bool(slurm_section(spec).login)
    paths, steps = {}, []
    for name, ch in spec.channels.items():
        if ch.kind != "local":
            paths[name] = f"{data_dir(spec)}/<{ch.source} as listed at submit>"
            steps.append(f"download {ch.source} once (unless it is there) and make it ${ch.env_name}")
        elif in_place(ch.source, workdir(spec), remote=remote):
            paths[name] = ch.source
        else:
            manifest = manifest_of(ch.source, spec.package.include)
            paths[name] = f"{data_dir(spec)}/{manifest.digest}"
            steps.append(
                f"copy {ch.source} ({counted(len(manifest.files), 'file')}, {size(manifest.total_bytes)}) to "
                f"{paths[name]} (only the files not there)"
            )
    return paths, steps


def place(spec: JobSpec, shell: ClusterShell, python: str, log: Callable[[str], None]) -> dict[str, str]:
    """At submit: each channel's folder on the cluster, copied or downloaded there as needed."""
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
