"""Data channels of a Slurm job: the folder each task reads at ``$SM_CHANNEL_<NAME>``, as a dry run shows it.

A folder every node sees (on the workdir's filesystem, or a remote path through a login node) is read in place. Any
other local folder is copied into ``<workdir>/data/`` by content (:mod:`cloudtrain.data.manifest`), sending only
the files the cluster lacks. A bucket is downloaded once (:mod:`cloudtrain.data.cache`), straight into
``<workdir>/data/buckets/`` when this machine is the login node. The transfers themselves are :mod:`.transfer`'s."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cloudtrain.backends.slurm.job_settings import slurm_section
from cloudtrain.backends.slurm.script import workdir
from cloudtrain.data.manifest import Manifest, build_manifest
from cloudtrain.history import cache_dir
from cloudtrain.spec import JobSpec
from cloudtrain.text import counted
from cloudtrain.text.numbers import size


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
