"""boto3 clients for one region, and the translation of AWS errors into cloudtrain's.

Settings are boto3's own: the credential chain, ``AWS_ENDPOINT_URL`` (and its per-service forms: another endpoint,
e.g. moto in the tests), ``AWS_MAX_ATTEMPTS`` (default 5 here; when all fail the command exits 3). The region is
always the job's, passed to every client: never the profile's or ``AWS_DEFAULT_REGION``."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from functools import cached_property
from typing import Any

from cloudtrain.errors import BackendError, CloudUnreachable, CredentialsError, NoCapacity

CREDENTIALS_HINT = "run `aws configure`, or set AWS_PROFILE (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
THROTTLING = frozenset(
    {
        "ThrottlingException",
        "Throttling",
        "ThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "SlowDown",
    }
)
#: Error codes that say "not now" rather than "no": botocore retried them already.
_TRANSIENT_CODES = frozenset(
    {
        "ThrottlingException",
        "Throttling",
        "ServiceUnavailable",
        "InternalFailure",
        "InternalServerError",
        "RequestTimeout",
        "SlowDown",
    }
)
#: Error codes that say the account may not have (more of) this instance type here.
_CAPACITY_CODES = frozenset({"ResourceLimitExceeded", "CapacityError", "InsufficientCapacityError"})
_CREDENTIAL_CODES = frozenset(
    {
        "ExpiredToken",
        "ExpiredTokenException",
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
    }
)


class AwsClients:
    """The three clients a job needs, created on first use, all in ``region``. The logs client does not retry:
    the tailer backs off on throttling with its own injectable sleep, so tests need not wait."""

    def __init__(self, region: str, session: Any = None):
        self.region = region
        self._session = session

    @cached_property
    def session(self) -> Any:
        if self._session is not None:
            return self._session
        import boto3
        import botocore.exceptions

        try:
            session = boto3.session.Session(region_name=self.region)
            credentials = session.get_credentials()
        except botocore.exceptions.ProfileNotFound as exc:
            raise CredentialsError(f"AWS profile {exc.kwargs.get('profile')!r} not found", CREDENTIALS_HINT) from None
        if credentials is None:
            raise CredentialsError("no AWS credentials found", CREDENTIALS_HINT)
        return session

    def client(self, service: str, config: dict[str, Any] | None = None, **retries: Any) -> Any:
        from botocore.config import Config

        # botocore's standard retries; 5 attempts unless the user set AWS_MAX_ATTEMPTS, which botocore reads itself
        default = (
            {"mode": "standard"} if os.environ.get("AWS_MAX_ATTEMPTS") else {"mode": "standard", "max_attempts": 5}
        )
        settings = Config(retries=retries or default, user_agent_extra="cloudtrain", **(config or {}))
        return self.session.client(service, region_name=self.region, config=settings)

    @cached_property
    def s3(self) -> Any:
        return self.client("s3")

    @cached_property
    def sagemaker(self) -> Any:
        return self.client("sagemaker")

    @cached_property
    def logs(self) -> Any:
        return self.client("logs", mode="standard", total_max_attempts=1)

    @cached_property
    def logs_tail(self) -> Any:
        """The client for ``StartLiveTail``. botocore sends that call to the ``stream-`` host
        prefix of the endpoint (``stream-logs.<region>.amazonaws.com``); an endpoint URL the
        user set (``AWS_ENDPOINT_URL…``: a proxy, a VPC endpoint, a fake) takes it as it is."""
        default = self.client("logs", {"ignore_configured_endpoint_urls": True}).meta.endpoint_url
        custom = self.logs.meta.endpoint_url != default
        return self.client(
            "logs", {"inject_host_prefix": not custom, "read_timeout": 20}, mode="standard", total_max_attempts=1
        )


def error_code(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    return response.get("Error", {}).get("Code") if isinstance(response, dict) else None


def is_transient(exc: BaseException) -> bool:
    """Throttling, a 5xx, a refused / dropped / timed-out connection: worth retrying, not the request's fault."""
    import botocore.exceptions as bx

    if isinstance(exc, (bx.ConnectionError, bx.HTTPClientError)):
        return True
    if isinstance(exc, bx.ClientError):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        return error_code(exc) in THROTTLING or error_code(exc) in _TRANSIENT_CODES or status >= 500
    return False


@contextlib.contextmanager
def translated(
    action: str,
    passing: type[BaseException] | tuple[type[BaseException], ...] = (),
    *,
    unreachable_hint: str | None = None,
) -> Iterator[None]:
    """Turn boto errors raised inside into one-line cloudtrain errors naming ``action``; ``passing`` ones go
    through unchanged. Trouble that outlasted botocore's retries is :class:`CloudUnreachable` (exit 3, "the
    job may still run"), with ``unreachable_hint``."""
    import botocore.exceptions as bx

    try:
        yield
    except passing:
        raise
    except (bx.NoCredentialsError, bx.PartialCredentialsError):
        raise CredentialsError("no AWS credentials found", CREDENTIALS_HINT) from None
    except bx.ClientError as exc:
        code = error_code(exc) or "Error"
        message = exc.response.get("Error", {}).get("Message") or str(exc)
        if code in _CREDENTIAL_CODES:
            raise CredentialsError(
                f"{action}: AWS refused the credentials ({code}: {message})", CREDENTIALS_HINT
            ) from None
        if code in _CAPACITY_CODES:
            raise NoCapacity(
                f"{action}: {code}: {message}", "request a quota increase, or pick another region or instance type"
            ) from None
        if is_transient(exc):  # botocore's own retries are spent
            raise CloudUnreachable(
                f"{action}: AWS kept answering {code}: {message}", unreachable_hint or "try again later"
            ) from None
        raise BackendError(f"{action}: {code}: {message}") from None
    except (bx.ConnectionError, bx.HTTPClientError) as exc:
        where = exc.kwargs.get("endpoint_url") or exc.kwargs.get("url") or "the AWS endpoint"
        raise CloudUnreachable(
            f"{action}: cannot reach {where} ({type(exc).__name__})",
            hint=unreachable_hint or "check the network, the region, and AWS_ENDPOINT_URL if set",
        ) from None
