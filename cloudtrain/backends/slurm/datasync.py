"""Receive a data folder into a Slurm workdir by content: each file once, then a folder of links.

Runs on the cluster (the login node, or here) as ``python3 -c SOURCE COMMAND DATA_DIR DIGEST``, standard library
only (Python >= 3.10). ``missing``: stdin is the folder's :class:`cloudtrain.data.manifest.Manifest`; prints
``{"complete": true}`` when ``DATA_DIR/DIGEST/`` exists, else ``{"missing": [sha256, ...]}`` (what is not in
``DATA_DIR/objects/`` yet). ``put``: stdin is a tar of ``manifest.json`` and ``objects/<sha256>``; each object is
checked against its name and kept read-only, then ``DIGEST/`` is made of hard links in a temporary folder renamed
into place, so a job never sees half a folder and the next job with the same content reuses it."""

import hashlib
import json
import os
import shutil
import sys
import tarfile
from typing import IO, Any

READ_ONLY_FILE = 0o444
READ_ONLY_DIR = 0o555


def missing(data_dir: str, digest: str, manifest: dict[str, Any]) -> dict[str, Any]:
    if os.path.isdir(os.path.join(data_dir, digest)):
        return {"complete": True}
    objects = os.path.join(data_dir, "objects")
    wanted = sorted({sha for _, _, sha in manifest["files"]})
    return {"missing": [sha for sha in wanted if not os.path.isfile(os.path.join(objects, sha))]}


def receive(data_dir: str, stream: IO[bytes]) -> dict[str, Any]:
    """The tar stream's objects into ``DATA_DIR/objects/``; returns the manifest it carried."""
    objects = os.path.join(data_dir, "objects")
    os.makedirs(objects, exist_ok=True)
    manifest: dict[str, Any] | None = None
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            source = tar.extractfile(member)
            if source is None:
                continue
            if member.name == "manifest.json":
                manifest = json.loads(source.read())
                continue
            sha = member.name.rpartition("/")[2]
            if not member.name.startswith("objects/") or len(sha) != 64:
                raise SystemExit(f"cloudtrain datasync: unexpected member {member.name!r}")
            tmp = os.path.join(objects, f".{sha}.{os.getpid()}")
            digest = hashlib.sha256()
            with open(tmp, "wb") as out:
                while block := source.read(2**20):
                    digest.update(block)
                    out.write(block)
            if digest.hexdigest() != sha:
                os.unlink(tmp)
                raise SystemExit(f"cloudtrain datasync: {sha} arrived with other content")
            os.chmod(tmp, READ_ONLY_FILE)
            os.replace(tmp, os.path.join(objects, sha))
    if manifest is None:
        raise SystemExit("cloudtrain datasync: no manifest.json in the stream")
    return manifest


def link_folder(data_dir: str, digest: str, manifest: dict[str, Any]) -> None:
    """``DATA_DIR/DIGEST/`` as hard links to the objects, complete or absent."""
    dest = os.path.join(data_dir, digest)
    if os.path.isdir(dest):
        return
    tmp = os.path.join(data_dir, f".tmp-{digest}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    for path, _, sha in manifest["files"]:
        target = os.path.normpath(os.path.join(tmp, path))
        if not target.startswith(tmp + os.sep):
            raise SystemExit(f"cloudtrain datasync: {path!r} would land outside the folder")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.link(os.path.join(data_dir, "objects", sha), target)
    for dirpath, _, _ in os.walk(tmp, topdown=False):
        os.chmod(dirpath, READ_ONLY_DIR)
    try:
        os.rename(tmp, dest)
    except OSError:
        if not os.path.isdir(dest):  # not another submit of the same content that finished first
            raise
        for dirpath, _, _ in os.walk(tmp):
            os.chmod(dirpath, 0o700)
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> None:
    command, data_dir, digest = argv[1:4]
    os.makedirs(data_dir, exist_ok=True)
    if command == "missing":
        print(json.dumps(missing(data_dir, digest, json.load(sys.stdin))))
    elif command == "put":
        manifest = receive(data_dir, sys.stdin.buffer)
        link_folder(data_dir, digest, manifest)
        print(json.dumps({"complete": True}))
    else:
        raise SystemExit(f"cloudtrain datasync: unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv)
