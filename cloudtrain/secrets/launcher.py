"""cloudtrain's secrets launcher: on the training machine, reads the job's ``secrets:`` into the training process's
environment, then runs the user's code.

The request carries only references (``CLOUDTRAIN_SECRET_HF_TOKEN=gcp:projects/…``), read again at each start so
``latest`` / ``AWSCURRENT`` pick up a rotation; the process gets ``HF_TOKEN``, not the reference. ``gcp:`` goes to
Secret Manager's REST API with the metadata server's token (``GCE_METADATA_HOST``; ``CLOUDTRAIN_SECRETMANAGER_ENDPOINT``
overrides the API), ``aws:`` to boto3's ``GetSecretValue``. A reference it cannot read is one line on stderr and exit 1,
before the user's code starts; values are never printed or written.

On Vertex AI this is ``python -m cloudtrain_secrets``, which runs ``python -m $CLOUDTRAIN_RUN_MODULE ARGS``; on
SageMaker ``cloudtrain_launch.py`` calls :func:`read_secrets`; ``--local`` uses the same functions. Standard library
only (boto3 where there), Python 3.7+: it runs inside the clouds' images."""

from __future__ import annotations  # annotations stay text: 3.7 reads ``dict[str, str]`` without evaluating it

import base64
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any

SECRET_PREFIX = "CLOUDTRAIN_SECRET_"  # + the variable's name: its reference
RUN_MODULE_ENV = "CLOUDTRAIN_RUN_MODULE"
SECRET_MANAGER_ENV = "CLOUDTRAIN_SECRETMANAGER_ENDPOINT"
SECRET_MANAGER = "https://secretmanager.googleapis.com"
METADATA_HOST_ENV = "GCE_METADATA_HOST"
METADATA_HOST = "metadata.google.internal"
TOKEN_PATH = "/computeMetadata/v1/instance/service-accounts/default/token"
TIMEOUT_S = 30


class SecretError(Exception):
    """A reference that cannot be read: ``str()`` is the one line printed."""


def metadata_token(environ: Mapping[str, str] = os.environ) -> str:
    """The access token of the machine's service account, from the metadata server."""
    host = environ.get(METADATA_HOST_ENV) or METADATA_HOST
    url = ("" if "://" in host else "http://") + host + TOKEN_PATH
    request = urllib.request.Request(url, headers={"Metadata-Flavor": "Google"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            token: str = json.loads(response.read().decode())["access_token"]
            return token
    except (OSError, ValueError, KeyError) as exc:
        raise SecretError(f"cannot get a token from the metadata server at {host}: {_reason(exc)}") from exc


def gcp_get(path: str, token: str, environ: Mapping[str, str] = os.environ) -> Any:
    """``GET`` Secret Manager's ``/v1/<path>`` as JSON; ``urllib.error.HTTPError`` when it refuses."""
    endpoint = (environ.get(SECRET_MANAGER_ENV) or SECRET_MANAGER).rstrip("/")
    request = urllib.request.Request(f"{endpoint}/v1/{path}", headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        return json.loads(response.read().decode())


def read_gcp(name: str, token: str, environ: Mapping[str, str] = os.environ) -> str:
    """The value of Secret Manager version ``name`` (``projects/P/secrets/S/versions/V``)."""
    try:
        body = gcp_get(name + ":access", token, environ)
        return base64.b64decode(body["payload"]["data"]).decode("utf-8")
    except urllib.error.HTTPError as exc:
        raise SecretError(f"gcp:{name}: {api_message(exc)}") from exc
    except (OSError, ValueError, KeyError) as exc:
        raise SecretError(f"gcp:{name}: {_reason(exc)}") from exc


def read_aws(arn: str, session: Any = None) -> str:
    """The ``AWSCURRENT`` value of Secrets Manager secret ``arn`` (``SecretString``, or ``SecretBinary`` as UTF-8)."""
    try:
        import boto3
        import botocore.exceptions
    except ImportError as exc:
        raise SecretError(f"aws:{arn}: boto3 is not installed in this image") from exc
    region = arn.split(":")[3]
    try:
        client = (session or boto3).client("secretsmanager", region_name=region)
        value = client.get_secret_value(SecretId=arn)
    except botocore.exceptions.ClientError as exc:
        error = exc.response.get("Error", {})
        raise SecretError(f"aws:{arn}: {error.get('Code')}: {error.get('Message')}") from exc
    except botocore.exceptions.BotoCoreError as exc:
        raise SecretError(f"aws:{arn}: {exc}") from exc
    if "SecretString" in value:
        return str(value["SecretString"])
    return bytes(value["SecretBinary"]).decode("utf-8")


def read_secrets(
    refs: Mapping[str, str],
    environ: Mapping[str, str] = os.environ,
    gcp_token: Callable[[], str] | None = None,
    aws_session: Any = None,
) -> dict[str, str]:
    """``{name: "gcp:…" | "aws:…"}`` → ``{name: value}``; ``gcp_token`` gives the token (default: the metadata's)."""
    values: dict[str, str] = {}
    token: list[str] = []
    for name, ref in refs.items():
        kind, _, target = ref.partition(":")
        if kind == "gcp":
            if not token:
                token.append((gcp_token or (lambda: metadata_token(environ)))())
            values[name] = read_gcp(target, token[0], environ)
        elif kind == "aws":
            values[name] = read_aws(target, aws_session)
        else:
            raise SecretError(f"{name}: {ref}: only gcp: and aws: references are read on the training machine")
    return values


def references(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """``{name: reference}`` from the ``CLOUDTRAIN_SECRET_<NAME>`` variables of the request."""
    return {k[len(SECRET_PREFIX) :]: v for k, v in environ.items() if k.startswith(SECRET_PREFIX)}


def environment_with_secrets(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """A copy of ``environ`` with the secrets read and set, and the launcher's own variables removed."""
    env = {k: v for k, v in environ.items() if not k.startswith(SECRET_PREFIX) and k != RUN_MODULE_ENV}
    env.update(read_secrets(references(environ), environ))
    return env


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m cloudtrain_secrets ARGS`` → ``python -m $CLOUDTRAIN_RUN_MODULE ARGS`` with the secrets set."""
    argv = sys.argv[1:] if argv is None else argv
    module = os.environ.get(RUN_MODULE_ENV)
    if not module:
        print(f"cloudtrain: {RUN_MODULE_ENV} is not set; was this job created by cloudtrain?", file=sys.stderr)
        return 2
    try:
        env = environment_with_secrets()
    except SecretError as exc:
        print(f"cloudtrain: cannot read secret {exc}", file=sys.stderr, flush=True)
        return 1
    command = [sys.executable, "-m", module] + list(argv)
    sys.stdout.flush()
    os.execve(command[0], command, env)


def api_message(exc: urllib.error.HTTPError) -> str:
    """Google's JSON error body (``{"error": {"code", "message", "status"}}``) as one line."""
    try:
        error = json.loads(exc.read().decode())["error"]
        return f"{error.get('code', exc.code)} {error.get('status', '')}: {error.get('message', '')}"
    except (ValueError, KeyError, TypeError, OSError):
        return f"HTTP {exc.code} {exc.reason}"


def _reason(exc: BaseException) -> str:
    return str(getattr(exc, "reason", None) or exc)


if __name__ == "__main__":
    sys.exit(main())
