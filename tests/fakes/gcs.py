"""Cloud Storage for tests: gcp-storage-emulator on a free port of 127.0.0.1."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def gcs_emulator(default_bucket: str = "my-bucket") -> Iterator[str]:
    """A running emulator holding ``default_bucket``; yields the value for STORAGE_EMULATOR_HOST."""
    from gcp_storage_emulator.server import create_server

    port = free_port()
    server = create_server("127.0.0.1", port, in_memory=True, default_bucket=default_bucket)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
