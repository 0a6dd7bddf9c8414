"""What cloudtrain shows of a job's environment: ``env:`` values that look secret are ``***``.

A value is masked when its variable's name says it is secret (``KEY``, ``TOKEN``, ``SECRET``,
``PASSWORD``, ``CREDENTIAL``, ``AUTH`` …) or when the value itself has the form of a known
credential (AWS access key ids, GitHub, Hugging Face, OpenAI, Slack, GitLab and Google API
keys, Google OAuth tokens, JWTs, private-key PEM, a URL with a password). Masking is for
display only: ``env:`` is sent as written (it is the user's choice); ``secrets:`` values are
never in the request at all.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "***"
_SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|PRIVATE|SESSION|COOKIE"
    r"|SIGNATURE|SALT|DSN|WEBHOOK",
    re.IGNORECASE,
)
_CREDENTIAL_VALUES = re.compile(
    r"(?:A3T[A-Z0-9]|AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[A-Z0-9]{16}"  # AWS access key ids
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"  # GitHub
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|sk-[A-Za-z0-9_-]{20,}"  # OpenAI, Anthropic and others
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API key
    r"|ya29\.[0-9A-Za-z_-]{20,}"  # Google OAuth access token
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWT
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"  # PEM
    r"|[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@"  # scheme://user:password@host
)
_INTERPOLATION = re.compile(r"\$\{[^}]*\}|^\$[A-Za-z_][A-Za-z0-9_]*$")


def looks_secret(name: str, value: str) -> bool:
    """Whether ``name=value`` should be shown as ``***``."""
    return bool(_SECRET_NAME.search(name) or _CREDENTIAL_VALUES.search(value))


def secret_names(env: Mapping[str, str]) -> list[str]:
    """The variables of ``env`` whose values are masked, in order."""
    return [name for name, value in env.items() if looks_secret(name, str(value))]


def env_warnings(env: Mapping[str, str]) -> list[str]:
    """One line for the secret-looking values of ``env:`` (if any), one per ``${…}`` value."""
    lines = []
    names = secret_names(env)
    if names:
        lines.append(
            f"env: {', '.join(names)} "
            + ("looks like a secret:" if len(names) == 1 else "look like secrets:")
            + " env: values are written into the job's request, where anyone who can read jobs sees them"
            " (cloudtrain shows them as ***); refer to them under secrets: instead (docs/how-to/secrets.md)"
        )
    for name, value in env.items():
        if found := _INTERPOLATION.search(str(value)):
            var = re.sub(r"[${}]", "", found.group(0)).split(":")[0] or "VAR"
            lines.append(
                f"env: {name}: {value!r} is sent as written (cloudtrain does not expand ${{…}}); for a value "
                f"from your shell or a secret store use secrets: ({name}: shell:{var} for --local; "
                "docs/how-to/secrets.md)"
            )
    return lines


def mask_env(env: Mapping[str, str], *, extra: Iterable[str] = ()) -> dict[str, str]:
    """``env`` with secret-looking values (and those named in ``extra``) replaced by ``***``."""
    hidden = set(secret_names(env)) | set(extra)
    return {name: MASK if name in hidden else value for name, value in env.items()}


def mask_document(doc: Any, names: Iterable[str], values: Iterable[str] = ()) -> Any:
    """A request (or any JSON-like document) with the values of variables ``names`` replaced by ``***``:
    ``{"NAME": value}`` entries (SageMaker ``Environment``, a local run's ``env``) and
    ``{"name": NAME, "value": value}`` items (Vertex ``env``); and ``values`` wherever a string holds
    them (a local run's ``CLUSTER_SPEC`` holds the whole job, env included)."""
    names = set(names)
    masker = ValueMasker(values)
    if not names and not masker:
        return doc

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if node.get("name") in names and isinstance(node.get("value"), str) and set(node) <= {"name", "value"}:
                return {**node, "value": MASK}
            return {k: MASK if k in names and isinstance(v, str) else walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return masker(node) if isinstance(node, str) and masker else node

    return walk(doc)


def mask_spec_document(doc: Any, env: Mapping[str, str]) -> Any:
    """``doc`` (a rendered request) with the secret-looking ``env:`` values of its job masked."""
    names = secret_names(env)
    return mask_document(doc, names, [env[n] for n in names])


class ValueMasker:
    """Replaces known secret values in text (a local run's log lines) with ``***``."""

    def __init__(self, values: Iterable[str]):
        # longest first, so that a value containing another is masked whole; very short values are not
        # masked (masking "1" would wreck every line)
        self._values = sorted({v for v in values if len(v) >= 4}, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._values)

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        return text


class _MaskRecords(logging.Filter):
    def __init__(self, masker: ValueMasker):
        super().__init__()
        self._masker = masker

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = self._masker(record.getMessage()), None
        return True


def mask_logs(values: Iterable[str], logger: str = "cloudtrain") -> None:
    """Mask ``values`` in every line the handlers of ``logger`` print (its ``--debug`` lines included)."""
    masker = ValueMasker(values)
    if masker:
        for handler in logging.getLogger(logger).handlers:
            handler.addFilter(_MaskRecords(masker))
