"""Google Secret Manager and the GCE metadata server's token endpoint, for tests: one small HTTP
server on a free port of 127.0.0.1 serving the REST paths cloudtrain's launcher uses.

* ``GET /computeMetadata/v1/instance/service-accounts/default/token`` (header
  ``Metadata-Flavor: Google``) → ``{"access_token", "expires_in", "token_type"}``;
* ``GET /v1/projects/P/secrets/S/versions/V:access`` → ``{"name", "payload": {"data": base64}}``;
* ``GET /v1/projects/P/secrets/S/versions/V`` → the version's metadata (no value);
* ``POST /token``: Google's OAuth token endpoint for a user's Application Default Credentials
  (:meth:`FakeSecretManager.user_credentials` writes a file whose ``token_uri`` points here).

Refusals are worded as the API words them: 401 without a token, 403 PERMISSION_DENIED for a
secret in ``denied``, 404 NOT_FOUND for one that does not exist. ``requests`` records each
``(path, token)`` so a test can see that a version was read at each start.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = "ya29.fake-metadata-token"
USER_TOKEN = "ya29.fake-user-token"
_VERSION = re.compile(r"^/v1/(projects/([^/]+)/secrets/([^/]+))/versions/([^/:]+)(:access)?$")


class FakeSecretManager:
    def __init__(self, server: ThreadingHTTPServer):
        self.server = server
        host, port = server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address: ("127.0.0.1", port)
        self.endpoint = f"http://{host}:{port}"  # CLOUDTRAIN_SECRETMANAGER_ENDPOINT
        self.metadata_host = f"{host}:{port}"  # GCE_METADATA_HOST
        self.secrets: dict[str, list[str]] = {}  # "projects/P/secrets/S" → versions' values, 1 first
        self.denied: set[str] = set()  # "projects/P/secrets/S" the service account may not read
        self.requests: list[tuple[str, str | None]] = []

    def add(self, name: str, value: str) -> str:
        """Add a version to secret ``name`` (``projects/P/secrets/S``); returns the version's name."""
        self.secrets.setdefault(name, []).append(value)
        return f"{name}/versions/{len(self.secrets[name])}"

    def user_credentials(self, path) -> str:
        """Write Application Default Credentials of a user refreshed here; returns the path, for
        ``GOOGLE_APPLICATION_CREDENTIALS``. (A workforce user's ``external_account_authorized_user``: the one
        user type whose token address the file sets; ``authorized_user`` files always use Google's.)"""
        path.write_text(
            json.dumps(
                {
                    "type": "external_account_authorized_user",
                    "audience": "//iam.googleapis.com/locations/global/workforcePools/fake-pool/providers/fake",
                    "refresh_token": "fake-refresh",
                    "token_url": f"{self.endpoint}/token",
                    "client_id": "fake-client",
                    "client_secret": "fake-secret",
                }
            )
        )
        return str(path)

    def env(self) -> dict[str, str]:
        """What points cloudtrain and its launcher at this server."""
        return {"CLOUDTRAIN_SECRETMANAGER_ENDPOINT": self.endpoint, "GCE_METADATA_HOST": self.metadata_host}


def _handler(fake: FakeSecretManager) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # no line per request
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            fake.requests.append((self.path, None))
            if self.path != "/token":
                return self._error(404, "NOT_FOUND", f"Unknown path {self.path}.")
            return self._send(200, {"access_token": USER_TOKEN, "expires_in": 3599, "token_type": "Bearer"})

        def do_GET(self) -> None:
            auth = self.headers.get("Authorization", "")
            token = auth[len("Bearer ") :] if auth.startswith("Bearer ") else None
            fake.requests.append((self.path, token))
            if self.path.startswith("/computeMetadata/v1/instance/service-accounts/default/token"):
                if self.headers.get("Metadata-Flavor") != "Google":
                    return self._send(403, {"error": "Missing Metadata-Flavor:Google header."})
                return self._send(200, {"access_token": TOKEN, "expires_in": 3599, "token_type": "Bearer"})
            match = _VERSION.match(self.path)
            if not match:
                return self._error(404, "NOT_FOUND", f"Unknown path {self.path}.")
            secret, project, _, version, access = match.groups()
            if token is None:
                return self._error(
                    401,
                    "UNAUTHENTICATED",
                    "Request is missing required authentication credential. "
                    "Expected OAuth 2 access token, login cookie or other valid authentication credential.",
                )
            resource = f"{secret}/versions/{version}"
            if secret in fake.denied:
                permission = "secretmanager.versions.access" if access else "secretmanager.versions.get"
                return self._error(
                    403,
                    "PERMISSION_DENIED",
                    f"Permission '{permission}' denied for resource '{resource}' (or it may not exist).",
                )
            values = fake.secrets.get(secret)
            number = len(values) if values and version == "latest" else int(version) if version.isdigit() else 0
            if not values or not 1 <= number <= len(values):
                what = f"Secret [{secret}]" if not values else f"Secret Version [{resource}]"
                return self._error(404, "NOT_FOUND", f"{what} not found or has no versions.")
            name = f"{secret}/versions/{number}"
            if not access:
                return self._send(200, {"name": name, "state": "ENABLED"})
            data = base64.b64encode(values[number - 1].encode()).decode()
            return self._send(200, {"name": name, "payload": {"data": data}})

        def _error(self, code: int, status: str, message: str) -> None:
            self._send(code, {"error": {"code": code, "message": message, "status": status}})

        def _send(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextlib.contextmanager
def secret_manager_server() -> Iterator[FakeSecretManager]:
    """A running fake on a free port of 127.0.0.1, always stopped."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    fake = FakeSecretManager(server)
    server.RequestHandlerClass = _handler(fake)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
