"""Write a folder as a one-layer OCI image archive that ``ctr images import`` loads (no registry, no docker).

python3 oci_image.py ROOTFS_DIR NAME:TAG OUT.tar [--cmd ARG ...]
"""

import gzip
import hashlib
import io
import json
import sys
import tarfile


def blob(out: tarfile.TarFile, data: bytes) -> tuple[str, int]:
    digest = hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo(f"blobs/sha256/{digest}")
    info.size = len(data)
    out.addfile(info, io.BytesIO(data))
    return f"sha256:{digest}", len(data)


def layer(rootfs: str) -> tuple[bytes, str]:
    """The rootfs as a gzipped tar, and the sha256 of the uncompressed tar (the config's diff_id)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(rootfs, arcname=".", filter=lambda i: i if not i.name.startswith("./proc/") else None)
    data = raw.getvalue()
    return gzip.compress(data, compresslevel=1, mtime=0), "sha256:" + hashlib.sha256(data).hexdigest()


def main(argv: list[str]) -> int:
    rootfs, ref, path = argv[1:4]
    cmd = argv[5:] if len(argv) > 4 and argv[4] == "--cmd" else []
    compressed, diff_id = layer(rootfs)
    with tarfile.open(path, "w") as out:
        layer_digest, layer_size = blob(out, compressed)
        config = {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], "Cmd": cmd},
            "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        }
        config_digest, config_size = blob(out, json.dumps(config).encode())
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": config_digest,
                "size": config_size,
            },
            "layers": [
                {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest, "size": layer_size}
            ],
        }
        manifest_digest, manifest_size = blob(out, json.dumps(manifest).encode())
        index = {
            "schemaVersion": 2,
            "manifests": [
                {
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": manifest_digest,
                    "size": manifest_size,
                    "annotations": {
                        "io.containerd.image.name": ref,
                        "org.opencontainers.image.ref.name": ref.rsplit(":", 1)[-1],
                    },
                }
            ],
        }
        for name, data in (
            ("index.json", json.dumps(index).encode()),
            ("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
