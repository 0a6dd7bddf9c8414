"""Where the Vertex backend connects and as whom: endpoints, credentials, project.

Every cloud import is inside a function; see the package docstring for the variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cloudtrain.backends.vertex import variables
from cloudtrain.errors import CredentialsError, UsageError
from cloudtrain.text import first_line

DEFAULT_VERTEX_ENDPOINT = "{region}-aiplatform.googleapis.com"
DEFAULT_LOGGING_ENDPOINT = "logging.googleapis.com"
SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
ADC_HINT = "run `gcloud auth application-default login` (or set GOOGLE_APPLICATION_CREDENTIALS to a key file)"


@dataclass(frozen=True)
class Endpoint:
    address: str  # host[:port]

    @property
    def local(self) -> bool:
        """A 127.0.0.1 / localhost endpoint: plain-text gRPC, anonymous credentials (fakes, emulators)."""
        host = self.address.rsplit(":", 1)[0] if not self.address.startswith("[") else self.address.split("]")[0] + "]"
        return host in _LOCAL_HOSTS


def vertex_endpoint(region: str, env: Mapping[str, str] = os.environ) -> Endpoint:
    return Endpoint(env.get(variables.VERTEX_ENDPOINT, DEFAULT_VERTEX_ENDPOINT).replace("{region}", region))


def logging_endpoint(env: Mapping[str, str] = os.environ) -> Endpoint:
    return Endpoint(env.get(variables.LOGGING_ENDPOINT, DEFAULT_LOGGING_ENDPOINT))


def log_reads_per_minute(env: Mapping[str, str] = os.environ, default: int = 50) -> int:
    raw = env.get(variables.LOG_READS_PER_MINUTE)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"{variables.LOG_READS_PER_MINUTE}={raw!r} is not a positive whole number", hint="e.g. 50")
    return value


def credentials() -> tuple[Any, str | None]:
    """Application Default Credentials and their project; one actionable line when there are none. The token is
    fetched here, once: bad credentials fail now, not as a retried UNAVAILABLE from gRPC's auth plugin later."""
    import google.auth
    import google.auth.transport.requests
    from google.auth.exceptions import DefaultCredentialsError, GoogleAuthError

    try:
        creds, project = google.auth.default(scopes=list(SCOPES))
    except DefaultCredentialsError as exc:
        raise CredentialsError("no Google Cloud credentials found (Application Default Credentials)", ADC_HINT) from exc
    try:
        if not creds.valid:
            creds.refresh(google.auth.transport.requests.Request())
    except GoogleAuthError as exc:
        first = first_line(exc)
        raise CredentialsError(f"Google Cloud credentials were refused: {first}", ADC_HINT) from exc
    return creds, project


def anonymous() -> Any:
    from google.auth.credentials import AnonymousCredentials

    return AnonymousCredentials()


def grpc_transport(transport_cls: type, endpoint: Endpoint, creds: Any) -> Any:
    """A GAPIC gRPC transport: TLS with ``creds`` for the cloud, plain text for a local endpoint."""
    if endpoint.local:
        import grpc

        return transport_cls(channel=grpc.insecure_channel(endpoint.address), host=endpoint.address)
    return transport_cls(host=endpoint.address, credentials=creds, scopes=list(SCOPES))


def resolve_project(project: str | None, adc_project: str | None = None, env: Mapping[str, str] = os.environ) -> str:
    project = project or adc_project or env.get("GOOGLE_CLOUD_PROJECT") or env.get("CLOUDSDK_CORE_PROJECT")
    if not project:
        raise UsageError(
            "no Google Cloud project given",
            hint="pass --project, set `project:` in the config, or `gcloud config set project ID`",
        )
    return project
