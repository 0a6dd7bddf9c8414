"""Secrets read on this machine, with the user's own credentials: the values of a ``--local`` run.

Cloud references are read through the launcher's own functions (:mod:`.launcher`), with a
token of the user's Google credentials (Application Default Credentials) instead of the
metadata server's, and boto3's default credential chain; the same endpoint settings apply
(``CLOUDTRAIN_SECRETMANAGER_ENDPOINT``, ``AWS_ENDPOINT_URL_SECRETS_MANAGER`` /
``AWS_ENDPOINT_URL``). A ``shell:`` reference is this shell's variable. The values go into the
replicas' environment only: never an argument, never a file cloudtrain writes.
"""

from __future__ import annotations

from collections.abc import Mapping

from cloudtrain.errors import CredentialsError, UsageError
from cloudtrain.secrets import launcher
from cloudtrain.secrets.refs import parse_ref

SCOPE = "https://www.googleapis.com/auth/cloud-platform"


def user_token() -> str:
    """An access token of the user's Google Application Default Credentials."""
    import google.auth
    import google.auth.exceptions
    import google.auth.transport.requests

    try:
        credentials, _ = google.auth.default(scopes=[SCOPE])
        credentials.refresh(google.auth.transport.requests.Request())
    except google.auth.exceptions.GoogleAuthError as exc:
        raise CredentialsError(f"cannot read gcp: secrets: no usable Google credentials ({exc})",
                               hint="run gcloud auth application-default login") from None  # fmt: skip
    return credentials.token


def resolve_here(secrets: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """``{name: reference}`` → ``{name: value}``, read on this machine; one line naming the secret when one
    cannot be read."""
    values: dict[str, str] = {}
    token: list[str] = []
    for name, text in secrets.items():
        ref = parse_ref(text)
        try:
            if ref.kind == "shell":
                if ref.target not in environ:
                    raise UsageError(f"secrets: {name}: {text}: ${ref.target} is not set in this shell",
                                     hint=f"export {ref.target}=… before cloudtrain submit --local")
                values[name] = environ[ref.target]
            elif ref.kind == "gcp":
                token = token or [user_token()]
                values[name] = launcher.read_gcp(ref.target, token[0], environ)
            else:
                values[name] = launcher.read_aws(ref.target)
        except launcher.SecretError as exc:
            raise UsageError(f"secrets: {name}: cannot read {exc}",
                             hint="check the reference and that your credentials may read it") from None
    return values
