"""A package index on 127.0.0.1 (PEP 503's simple API, what pip reads), serving wheels made here.

Stands in for PyPI where a test needs a requirement the image does not ship: pip installs it for
real, over HTTP. :meth:`PackageIndex.stop` cuts the network for what follows: the same
``PIP_INDEX_URL`` then refuses every connection, as an index does when a laptop is offline.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import re
import threading
import zipfile
from pathlib import Path


def make_wheel(folder: Path, name: str, version: str, source: str) -> Path:
    """A pure-Python wheel of one module (``name`` with ``-`` as ``_``) holding ``source``."""
    module = re.sub(r"[-.]+", "_", name).lower()
    dist_info = f"{module}-{version}.dist-info"
    files = {
        f"{module}.py": source.encode(),
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: cloudtrain-tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for path, data in files.items()
    ]
    files[f"{dist_info}/RECORD"] = ("\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n").encode()
    path = Path(folder) / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name_in, data in files.items():
            wheel.writestr(name_in, data)
    return path


class PackageIndex:
    """``url`` is the simple index; :meth:`add` puts a project's wheel on it."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.requests: list[str] = []
        root, seen = self.folder, self.requests

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(root), **kwargs)

            def do_GET(self) -> None:
                seen.append(self.path)
                super().do_GET()

            def log_message(self, *args) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/simple/"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def add(self, name: str, version: str, source: str) -> Path:
        project = re.sub(r"[-_.]+", "-", name).lower()
        files = self.folder / "files"
        files.mkdir(exist_ok=True)
        wheel = make_wheel(files, name, version, source)
        page = self.folder / "simple" / project
        page.mkdir(parents=True, exist_ok=True)
        links = "".join(
            f'<a href="/files/{w.name}">{w.name}</a>\n' for w in sorted(files.glob(f"{wheel.name.split('-')[0]}-*"))
        )
        (page / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
        return wheel

    def stop(self) -> None:
        """Close the port: from now on every request to :attr:`url` is refused."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
