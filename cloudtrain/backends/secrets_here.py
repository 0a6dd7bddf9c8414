"""Secrets read on this machine, with the user's own credentials: the values of a ``--local`` run.

Cloud references are read through the launcher's functions (:mod:`cloudtrain.secrets.launcher`) with the user's
Application Default Credentials instead of the metadata server's, and boto3's chain; the same endpoint settings
apply. A ``shell:`` reference is this shell's variable. Values go into the replicas' environment only: never an
argument, never a file cloudtrain writes."""

from __future__ import annotations

import urllib.error
from collections.abc import Callable, Mapping

from cloudtrain.errors import CredentialsError, UsageError
from cloudtrain.secrets import launcher
from cloudtrain.secrets.refs import STORES, SecretRef, parse_ref

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
        raise CredentialsError(
            f"cannot read gcp: secrets: no usable Google credentials ({exc})",
            hint="run gcloud auth application-default login",
        ) from None
    return str(credentials.token)  # google-auth's credentials are untyped here: the token is a str once refreshed


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
                    raise UsageError(
                        f"secrets: {name}: {text}: ${ref.target} is not set in this shell",
                        hint=f"export {ref.target}=… before cloudtrain submit --local",
                    )
                values[name] = environ[ref.target]
            elif ref.kind == "gcp":
                token = token or [user_token()]
                values[name] = launcher.read_gcp(ref.target, token[0], environ)
            else:
                values[name] = launcher.read_aws(ref.target)
        except launcher.SecretError as exc:
            raise UsageError(
                f"secrets: {name}: cannot read {exc}", hint="check the reference and that your credentials may read it"
            ) from None
    return values


def check_exist(secrets: Mapping[str, str], environ: Mapping[str, str], *, warn: Callable[[str], None]) -> None:
    """At submit: each ``gcp:`` / ``aws:`` secret exists, asked with the user's credentials (Secret Manager
    ``versions.get``, Secrets Manager ``DescribeSecret``: neither reads the value). One that does not exist
    is refused; one the user may not see is a warning (the job's identity may still read it)."""
    token: list[str] = []
    for name, text in secrets.items():
        ref = parse_ref(text)
        if ref.kind == "gcp":
            token = token or [user_token()]
            try:
                launcher.gcp_get(ref.target, token[0], environ)
            except urllib.error.HTTPError as exc:
                _verdict(name, ref, exc.code == 404, launcher.api_message(exc), warn)
            except OSError as exc:
                warn(f"secrets: {name}: could not check {text}: {exc}")
        elif ref.kind == "aws":
            import boto3
            import botocore.exceptions

            try:
                boto3.client("secretsmanager", region_name=ref.region).describe_secret(SecretId=ref.target)
            except botocore.exceptions.ClientError as exc:
                error = exc.response.get("Error", {})
                missing = error.get("Code") == "ResourceNotFoundException"
                _verdict(name, ref, missing, f"{error.get('Code')}: {error.get('Message')}", warn)
            except botocore.exceptions.BotoCoreError as exc:
                warn(f"secrets: {name}: could not check {text}: {exc}")


def _verdict(name: str, ref: SecretRef, missing: bool, why: str, warn: Callable[[str], None]) -> None:
    text = str(ref)
    if missing:
        raise UsageError(
            f"secrets: {name}: {text} does not exist ({why})",
            hint="check the reference, or create the secret (docs/how-to/secrets.md)",
        )
    reader = STORES[ref.kind].reader
    warn(f"secrets: {name}: could not check {text} with your credentials ({why}); {reader} must be able to read it")
