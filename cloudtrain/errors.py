"""The small exception hierarchy behind the CLI's one error funnel.

Every error a user can cause is a :class:`CloudtrainError`: the CLI prints its one-line
message (plus the hint, if any) and exits with its ``exit_code``; the traceback is shown
only with ``--debug``.
"""

from __future__ import annotations


class CloudtrainError(Exception):
    """An error the user can act on. ``str()`` is the one line the CLI prints."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} — {self.hint}"


class UsageError(CloudtrainError):
    """Bad input: a config, a flag, a path. Exit code 2, like click's usage errors."""

    exit_code = 2


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
        self.file, self.line, self.field = file, line, field
        where = ":".join(str(p) for p in (file, line) if p is not None)
        prefix = ": ".join(p for p in (where, field) if p)
        super().__init__(f"{prefix}: {message}" if prefix else message, hint)


class PackagingError(UsageError):
    """The training package cannot be built as configured."""


class CredentialsError(CloudtrainError):
    """No usable cloud credentials were found."""


class BackendError(CloudtrainError):
    """A cloud (or local) backend refused or failed a request."""


class JobFailed(CloudtrainError):
    """The job ended in a state other than success; the exit code mirrors that."""

    exit_code = 1
