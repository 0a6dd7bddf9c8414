"""The small exception hierarchy behind the CLI's one error funnel (one line, ``exit_code``, traceback: ``--debug``)."""

from __future__ import annotations

import enum

from cloudtrain.secrets.masking import mask_text


class ExitCode(enum.IntEnum):
    """The CLI's one closed table of exit codes (docs/reference/exit-codes.md). Every command uses it."""

    OK = 0  # success
    JOB_FAILED = 1  # the job's own code failed (a replica's code is shown, never passed through)
    BAD_INPUT = 2  # something the user must fix before anything runs
    UNREACHABLE = 3  # transient cloud trouble outlasted the retries; the job may still run
    NO_CAPACITY = 4  # no capacity or quota on any candidate
    PREEMPTED = 5  # the platform stopped the job; what was saved is printed
    TIMED_OUT = 124  # stopped by max_runtime
    INTERRUPTED = 130  # interrupted by the user (Ctrl-C)


class CloudtrainError(Exception):
    """An error the user can act on. ``str()`` is the one line the CLI prints."""

    exit_code: int = ExitCode.JOB_FAILED

    def __init__(self, message: str, hint: str | None = None):
        # no error ever shows a credential, whichever code raised it
        message, hint = mask_text(message), mask_text(hint) if hint else hint
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} — {self.hint}"


class UsageError(CloudtrainError):
    """Bad input: a config, a flag, a path. Exit code 2, like click's usage errors."""

    exit_code = ExitCode.BAD_INPUT


class ConfigError(UsageError):
    """A problem at one place of a config file: ``file:line: field: what — fix``."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ):
        self.file, self.line, self.field, self.detail = file, line, field, mask_text(message)
        where = ":".join(str(p) for p in (file, line) if p is not None)
        prefix = ": ".join(p for p in (where, field) if p)
        super().__init__(f"{prefix}: {message}" if prefix else message, hint)


class ConfigErrors(ConfigError):
    """Every problem of one config, in showing order, each an ``error:`` line; reads as its first error."""

    def __init__(self, errors: list[ConfigError] | tuple[ConfigError, ...]):
        first = errors[0]
        super().__init__(first.detail, file=first.file, line=first.line, field=first.field, hint=first.hint)
        self.errors = tuple(errors)
        self.message, self.hint = "\n".join(str(e) for e in self.errors), None


class PackagingError(UsageError):
    """The training package cannot be built as configured."""


class MissingExtra(UsageError):
    """A cloud's libraries are not installed: the hint is the install command (``cloudtrain[vertex]``)."""

    def __init__(self, message: str, hint: str | None = None, *, extra: str = ""):
        super().__init__(message, hint)
        self.extra = extra


class CredentialsError(UsageError):
    """No usable cloud credentials were found."""


class BackendError(CloudtrainError):
    """A cloud (or local) backend refused or failed a request."""


class CloudSetupError(BackendError):
    """The cloud refused something the user must fix before anything runs: a bucket, a permission, a job id."""

    exit_code = ExitCode.BAD_INPUT


class CloudUnreachable(BackendError):
    """Transient trouble (5xx, throttling, dropped connections) outlasted the retries."""

    exit_code = ExitCode.UNREACHABLE


class NoCapacity(BackendError):
    """No candidate (the main request and every fallback) got capacity or quota."""

    exit_code = ExitCode.NO_CAPACITY


class JobFailed(CloudtrainError):
    """The job ended in a state other than success; the exit code mirrors that."""

    exit_code = ExitCode.JOB_FAILED
